//! Candidate rules from the URLs of one host (docs/mine.md, stage 1).
//!
//! Candidates come from the URLs' text, sizes are their evidence (as in
//! DustBuster): URLs that meet when one thing is taken out of their text (a
//! query pair, the last segment, the case of the path, one segment, the
//! text around their runs of digits) form pairs; each pair is aligned by
//! tokens (path segments, query pairs, digit runs) and its difference, when
//! it is one a rules file can say and the two URLs' sizes agree, proposes a
//! candidate of one family. A candidate is a concrete
//! [`Rule`] with an [`Rule::apply`] that evidence (`learn.rs`) runs on every
//! URL of the host, so that what is measured is exactly what is written.

use std::collections::{HashMap, HashSet};

use regex::Regex;
use smallvec::SmallVec;

use super::evidence::{agrees, Part, Side, Thresholds, WindowSize};

/// One distinct URL of a host, as the miner keeps it.
#[derive(Clone, Debug)]
pub(crate) struct UrlEntry<'a> {
    /// From the path on (`/a/b?x=1`); the summary's URL without scheme and
    /// host. (It and `windows` lie in one text and one list for all the
    /// host's URLs, not in two allocations a URL.)
    pub target: &'a str,
    pub hits: u64,
    pub learn: Side,
    pub confirm: Side,
    /// Its sizes per window: the learning part's (the first `learned`),
    /// then the confirming part's, each in window order.
    pub windows: &'a [WindowSize],
    pub learned: u8,
}

impl UrlEntry<'_> {
    pub(crate) fn learn_windows(&self) -> &[WindowSize] {
        &self.windows[..usize::from(self.learned)]
    }

    pub(crate) fn confirm_windows(&self) -> &[WindowSize] {
        &self.windows[usize::from(self.learned)..]
    }

    /// The learning part as a verdict reads it.
    pub(crate) fn learn_part(&self) -> Part<'_> {
        self.learn.part(self.learn_windows())
    }

    /// The confirming part as a verdict reads it.
    pub(crate) fn confirm_part(&self) -> Part<'_> {
        self.confirm.part(self.confirm_windows())
    }
}

/// The rule families (the names in the output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Family {
    IrrelevantParam,
    DefaultParam,
    IndexFile,
    Case,
    Slug,
    Substitution,
    /// A URL that only redirects, to the page with the same digits.
    Redirect,
    /// An old path prefix for a new one, from redirects clients followed.
    Moved,
    /// One pair of URLs, nothing to generalize.
    Literal,
    HostAlias,
    /// `http` URLs redirected to their `https` spelling.
    Scheme,
}

impl Family {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Family::IrrelevantParam => "irrelevant-param",
            Family::DefaultParam => "default-param",
            Family::IndexFile => "index-file",
            Family::Case => "case",
            Family::Slug => "slug",
            Family::Substitution => "substitution",
            Family::Redirect => "redirect",
            Family::Moved => "moved-prefix",
            Family::Literal => "literal-alias",
            Family::HostAlias => "host-alias",
            Family::Scheme => "http-as-https",
        }
    }

    /// The short name in rule ids (`m-param-3`).
    pub(crate) fn id_stem(self) -> &'static str {
        match self {
            Family::IrrelevantParam | Family::DefaultParam => "param",
            Family::IndexFile => "index",
            Family::Case => "case",
            Family::Slug => "slug",
            Family::Substitution => "subst",
            Family::Redirect => "redirect",
            Family::Moved => "moved",
            Family::Literal => "literal",
            Family::HostAlias => "alias",
            Family::Scheme => "scheme",
        }
    }
}

/// A candidate rule, in the terms of the rules file.
#[derive(Clone, Debug)]
pub(crate) enum Rule {
    /// `[[host.path]] prefix = P, drop-params = [name]`.
    DropParam { prefix: String, name: String },
    /// `[[host.path]] prefix = P, defaults = { name = value }`.
    DefaultParam {
        prefix: String,
        name: String,
        value: String,
    },
    /// `extra-index-files = [name]`.
    IndexFile { name: String },
    /// `rules = ["+lowercase-path"]`.
    LowercasePath,
    /// `rewrite = [{ regex, replace }]` (slug, substitution, redirect,
    /// literal alias).
    Rewrite {
        family: Family,
        regex: Regex,
        replace: String,
        /// A slug rule's literal path before the slug (`/books/`), by which
        /// [`Rule::apply`] rewrites without the regex ([`apply_slug`]); the
        /// regex ([`slug_rule`]) is not one-pass, so its captures took a
        /// backtracking search per URL. `None` for the other families.
        slug: Option<Box<str>>,
    },
    /// `host-aliases = [[from, to]]`: `from` and `to` are `host/` or
    /// `host/prefix/`.
    HostAlias { from: String, to: String },
    /// `rules = ["+http-as-https"]`: reported from redirects, never
    /// written (see `learn.rs`, `scheme_finding`).
    HttpAsHttps,
}

impl Rule {
    pub(crate) fn family(&self) -> Family {
        match self {
            Rule::DropParam { .. } => Family::IrrelevantParam,
            Rule::DefaultParam { .. } => Family::DefaultParam,
            Rule::IndexFile { .. } => Family::IndexFile,
            Rule::LowercasePath => Family::Case,
            Rule::Rewrite { family, .. } => *family,
            Rule::HostAlias { .. } => Family::HostAlias,
            Rule::HttpAsHttps => Family::Scheme,
        }
    }

    /// A one-line description (the evidence file's `rule`).
    pub(crate) fn describe(&self) -> String {
        match self {
            Rule::DropParam { prefix, name } => format!("{prefix}: drop-params {name}"),
            Rule::DefaultParam {
                prefix,
                name,
                value,
            } => format!("{prefix}: defaults {name}={value}"),
            Rule::IndexFile { name } => format!("extra-index-files {name}"),
            Rule::LowercasePath => "+lowercase-path".into(),
            Rule::Rewrite { regex, replace, .. } => {
                format!("rewrite {} -> {replace}", regex.as_str())
            }
            Rule::HostAlias { from, to } => format!("host-alias {from} -> {to}"),
            Rule::HttpAsHttps => "+http-as-https".into(),
        }
    }

    /// The target `rule` makes of `target` (a host-less URL from the path
    /// on), if it changes it. Host aliases act across hosts: `None` here.
    pub(crate) fn apply(&self, target: &str) -> Option<String> {
        let (path, query) = split_query(target);
        match self {
            Rule::DropParam { prefix, name } => {
                if !under_prefix(path, prefix) {
                    return None;
                }
                remove_params(path, query?, |k, _| k.eq_ignore_ascii_case(name))
            }
            Rule::DefaultParam {
                prefix,
                name,
                value,
            } => {
                if !under_prefix(path, prefix) {
                    return None;
                }
                remove_params(path, query?, |k, v| k == name && v == Some(value.as_str()))
            }
            Rule::IndexFile { name } => {
                let cut = path.rfind('/')? + 1;
                if !path[cut..].eq_ignore_ascii_case(name) {
                    return None;
                }
                Some(join(&path[..cut], query))
            }
            Rule::LowercasePath => {
                let lower = path.to_ascii_lowercase();
                (lower != path).then(|| join(&lower, query))
            }
            Rule::Rewrite {
                slug: Some(before), ..
            } => apply_slug(before, target),
            Rule::Rewrite { regex, replace, .. } => {
                // A URL the rule does not match is told so without a
                // search for captures (`is_match` needs none).
                if !regex.is_match(target) {
                    return None;
                }
                let out = regex.replace_all(target, replace.as_str());
                (out != target).then(|| out.into_owned())
            }
            Rule::HostAlias { .. } | Rule::HttpAsHttps => None,
        }
    }
}

/// Splits `/a?b` into (`/a`, `Some("b")`).
pub(crate) fn split_query(target: &str) -> (&str, Option<&str>) {
    // memchr: `split_once('?')`'s char searcher was 4 % of mining a log
    // of many hosts, most of it here (every rule applied to every URL).
    match memchr::memchr(b'?', target.as_bytes()) {
        Some(q) => (&target[..q], Some(&target[q + 1..])),
        None => (target, None),
    }
}

fn join(path: &str, query: Option<&str>) -> String {
    match query {
        Some(q) if !q.is_empty() => format!("{path}?{q}"),
        _ => path.to_owned(),
    }
}

/// The rules file's path-section match: the path starts with `prefix`, or is
/// `prefix` without its final `/`.
fn under_prefix(path: &str, prefix: &str) -> bool {
    path.starts_with(prefix) || prefix.strip_suffix('/') == Some(path)
}

fn remove_params(
    path: &str,
    query: &str,
    drop: impl Fn(&str, Option<&str>) -> bool,
) -> Option<String> {
    let mut kept: Vec<&str> = Vec::new();
    let mut removed = false;
    for pair in split_at_byte(query, b'&') {
        let (k, v) = match split_once_at_byte(pair, b'=') {
            Some((k, v)) => (k, Some(v)),
            None => (pair, None),
        };
        if drop(k, v) {
            removed = true;
        } else {
            kept.push(pair);
        }
    }
    removed.then(|| join(path, Some(&kept.join("&"))))
}

/// The form two targets are compared in after a rule: the path's trailing
/// `/` (which `trailing-slash=add` writes after the rewrites) does not count.
pub(crate) fn grouping_key(target: &str) -> String {
    let mut key = String::with_capacity(target.len());
    push_grouping_key(target, &mut key);
    key
}

/// [`grouping_key`] written at the end of `out` (the miner keeps the
/// prints' keys in one string).
pub(crate) fn push_grouping_key(target: &str, out: &mut String) {
    let (path, query) = split_query(target);
    let path = match path.strip_suffix('/') {
        Some(p) if !p.is_empty() => p,
        _ => path,
    };
    out.push_str(path);
    if let Some(q) = query.filter(|q| !q.is_empty()) {
        out.push('?');
        out.push_str(q);
    }
}

/// Where a parameter rule applies: the path up to its first segment with a
/// digit (ids vary, the directory does not), ending in `/`.
/// `text` cut at each `sep`, an ASCII byte, as `text.split(char::from(sep))`
/// cuts it, without the char searcher's set-up at each piece (a few pieces
/// of a few bytes are the common case).
fn split_at_byte(text: &str, sep: u8) -> impl Iterator<Item = &str> {
    debug_assert!(sep.is_ascii());
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let t = rest?;
        match t.bytes().position(|b| b == sep) {
            // An ASCII byte is a whole character: both sides are `str`s.
            Some(i) => {
                rest = Some(&t[i + 1..]);
                Some(&t[..i])
            }
            None => rest.take(),
        }
    })
}

/// `text.split_once(char::from(sep))` for an ASCII `sep`, without the char
/// searcher.
fn split_once_at_byte(text: &str, sep: u8) -> Option<(&str, &str)> {
    debug_assert!(sep.is_ascii());
    let i = text.bytes().position(|b| b == sep)?;
    Some((&text[..i], &text[i + 1..]))
}

fn param_prefix(path: &str) -> String {
    let mut prefix = String::from("/");
    for seg in split_at_byte(path, b'/').filter(|s| !s.is_empty()) {
        if seg.bytes().any(|b| b.is_ascii_digit()) {
            break;
        }
        prefix.push_str(seg);
        prefix.push('/');
    }
    prefix
}

/// What a pair's difference proposes, before the candidates are decided.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Proposal {
    /// One query pair present in one URL, absent from the other.
    Param {
        prefix: String,
        name: String,
    },
    Index {
        name: String,
    },
    Case,
    /// One path segment differs: its position and the segments before it.
    Slug {
        before: Vec<String>,
    },
    /// The same digit runs in both, other text around them: the two
    /// skeletons (digits as `\0`), in increasing order.
    Substitution {
        a: String,
        b: String,
    },
    /// Nothing in common to generalize: one target to another.
    Literal {
        from: String,
        to: String,
    },
}

/// How each URL's token differences are proposed: query pairs first, then
/// path-only differences.
fn align(a: &str, b: &str) -> Option<Proposal> {
    let (pa, qa) = split_query(a);
    let (pb, qb) = split_query(b);
    if pa == pb {
        // (On the stack: most queries have a few pairs.)
        fn pairs(q: Option<&str>) -> SmallVec<[&str; 8]> {
            q.map_or(SmallVec::new(), |q| split_at_byte(q, b'&').collect())
        }
        let (mut xa, mut xb) = (pairs(qa), pairs(qb));
        xa.sort_unstable();
        xb.sort_unstable();
        let (long, short) = if xa.len() > xb.len() {
            (xa, xb)
        } else {
            (xb, xa)
        };
        if long.len() != short.len() + 1 {
            return None;
        }
        // The one pair of `long` not in `short` (both sorted).
        let mut extra = None;
        let mut j = 0;
        for p in &long {
            if j < short.len() && short[j] == *p {
                j += 1;
            } else if extra.is_none() {
                extra = Some(*p);
            } else {
                return None;
            }
        }
        let name = extra?.split('=').next()?;
        if name.is_empty() || name.contains(['*', '?', '[', ']', '{', '}', '\\']) {
            return None;
        }
        return Some(Proposal::Param {
            prefix: param_prefix(pa),
            name: name.to_owned(),
        });
    }
    if qa == qb {
        if pa.eq_ignore_ascii_case(pb) {
            return Some(Proposal::Case);
        }
        let (long, short) = if pa.len() > pb.len() {
            (pa, pb)
        } else {
            (pb, pa)
        };
        if let Some(name) = long.strip_prefix(short) {
            if short.ends_with('/') && !name.is_empty() && !name.contains('/') {
                return Some(Proposal::Index {
                    name: name.to_owned(),
                });
            }
        }
        let sa: SmallVec<[&str; 16]> = split_at_byte(pa, b'/').collect();
        let sb: SmallVec<[&str; 16]> = split_at_byte(pb, b'/').collect();
        if sa.len() == sb.len() {
            let mut differ = (0..sa.len()).filter(|&i| sa[i] != sb[i]);
            // A slug keeps something after it that tells pages apart.
            if let (Some(i), None) = (differ.next(), differ.next()) {
                if i + 1 < sa.len() && sa[i + 1..].iter().any(|s| !s.is_empty()) {
                    return Some(Proposal::Slug {
                        before: sa[1..i].iter().map(|s| (*s).to_owned()).collect(),
                    });
                }
                return None;
            }
        }
    }
    let (ka, da) = skeleton(a);
    let (kb, db) = skeleton(b);
    if da.is_empty() || da != db || ka == kb {
        return None;
    }
    let (a, b) = if ka < kb { (ka, kb) } else { (kb, ka) };
    Some(Proposal::Substitution { a, b })
}

/// A one-off alias (for a pair alone in its size bucket): two paths with the
/// same query whose 200 responses match
/// exactly (the same smallest and largest size of the cluster, so two
/// dynamic pages of nearly one size do not pass), each requested at least
/// `--min-hits` times; the less requested goes to the more requested.
/// Other query values (`sort=asc` against `sort=desc`: same bytes, other
/// order) are never aliased.
fn literal(a: &UrlEntry, b: &UrlEntry, th: &Thresholds) -> Option<Proposal> {
    let (pa, qa) = split_query(a.target);
    let (pb, qb) = split_query(b.target);
    let (x, y) = (a.learn.sig?, b.learn.sig?);
    let exact = x.strong && y.strong && x.lo == y.lo && x.span == y.span;
    if !th.literal_aliases
        || qa != qb
        || pa == pb
        || !exact
        || u64::from(a.learn.ok.min(b.learn.ok)) < th.min_hits
        // Other ids (`/jobs/436`, `/jobs/691`) name other things.
        || skeleton(pa).1 != skeleton(pb).1
    {
        return None;
    }
    let (from, to) = if (a.hits, &b.target) < (b.hits, &a.target) {
        (a, b)
    } else {
        (b, a)
    };
    // No digits: the target is matched as it is (a `\0` would be a capture).
    if from.target.contains('\0') || to.target.contains('\0') {
        return None;
    }
    Some(Proposal::Literal {
        from: from.target.to_owned(),
        to: to.target.to_owned(),
    })
}

/// The runs of `target` in order: each longest run of ASCII digits and
/// of other bytes, and whether it is digits.
fn digit_split(target: &str) -> impl Iterator<Item = (bool, &str)> {
    let bytes = target.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        let start = i;
        let digits = bytes.get(i)?.is_ascii_digit();
        while i < bytes.len() && bytes[i].is_ascii_digit() == digits {
            i += 1;
        }
        Some((digits, &target[start..i]))
    })
}

/// A target with each run of digits replaced by `\0`, and the runs.
fn skeleton(target: &str) -> (String, Vec<&str>) {
    let mut out = String::with_capacity(target.len());
    let mut digits = Vec::new();
    for (is_digits, run) in digit_split(target) {
        if is_digits {
            digits.push(run);
            out.push('\0');
        } else {
            out.push_str(run);
        }
    }
    (out, digits)
}

/// The runs of digits of `target` (those of [`skeleton`]) joined by `/`
/// into `out`, which is cleared first; whether there is any. Runs of
/// digits hold no `/`, so two targets have the same runs when they have
/// the same `out`.
fn digit_runs(target: &str, out: &mut String) -> bool {
    out.clear();
    for (_, run) in digit_split(target).filter(|(is_digits, _)| *is_digits) {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(run);
    }
    !out.is_empty()
}

/// The regex that matches the targets of `skeleton` (each `\0` a captured
/// run of digits); a `/` that ends the path is optional, since rewrites see
/// the URL before `trailing-slash=add`.
fn skeleton_regex(skeleton: &str) -> String {
    let mut re = String::from("^");
    let (path, query) = split_query(skeleton);
    let (path, slash) = match path.strip_suffix('/') {
        Some(p) if !p.is_empty() => (p, true),
        _ => (path, false),
    };
    for (i, lit) in path.split('\0').enumerate() {
        if i > 0 {
            re.push_str(r"(\d+)");
        }
        re.push_str(&regex::escape(lit));
    }
    if slash {
        re.push_str("/?");
    }
    if let Some(q) = query {
        re.push_str(r"\?");
        for (i, lit) in q.split('\0').enumerate() {
            if i > 0 {
                re.push_str(r"(\d+)");
            }
            re.push_str(&regex::escape(lit));
        }
    }
    re.push('$');
    re
}

/// The replacement that writes `skeleton` with the captured runs, in order,
/// without the path's final `/` (which the profile adds back if it does).
fn skeleton_replacement(skeleton: &str) -> String {
    let (path, query) = split_query(skeleton);
    let path = match path.strip_suffix('/') {
        Some(p) if !p.is_empty() => p,
        _ => path,
    };
    let mut out = String::new();
    let mut group = 0;
    let mut push = |text: &str, out: &mut String| {
        for (i, lit) in text.split('\0').enumerate() {
            if i > 0 {
                group += 1;
                out.push_str(&format!("${{{group}}}"));
            }
            out.push_str(&lit.replace('$', "$$"));
        }
    };
    push(path, &mut out);
    if let Some(q) = query {
        out.push('?');
        push(q, &mut out);
    }
    out
}

/// The rule a slug proposal stands for: any segment after `before`, when
/// something follows it, is written `-`.
fn slug_rule(before: &[String]) -> Option<Rule> {
    let mut re = String::from("^/");
    let mut rep = String::from("/");
    let mut literal = String::from("/");
    for seg in before {
        re.push_str(&regex::escape(seg));
        re.push('/');
        rep.push_str(&seg.replace('$', "$$"));
        rep.push('/');
        literal.push_str(seg);
        literal.push('/');
    }
    re.push_str("[^/?]+(/[^?]*[^/?][^?]*(?:\\?.*)?)$");
    rep.push_str("-${1}");
    Some(Rule::Rewrite {
        family: Family::Slug,
        regex: Regex::new(&re).ok()?,
        replace: rep,
        slug: Some(literal.into()),
    })
}

/// What the slug rule of the literal path `before` ([`slug_rule`]) makes
/// of `target`, as its regex and replacement would, by byte tests: the
/// regex `^BEFORE[^/?]+(/[^?]*[^/?][^?]*(?:\?.*)?)$` matches when
/// `target` starts with `before`, the segment after it is not empty and
/// ends at a `/` (not at a `?` or the end), the path after that `/` has a
/// byte other than `/`, and the query, if any, has no line feed (`.`); the
/// replacement writes `before`, `-` and the capture (from that `/` on).
fn apply_slug(before: &str, target: &str) -> Option<String> {
    let rest = target.strip_prefix(before)?;
    let end = memchr::memchr2(b'/', b'?', rest.as_bytes())?;
    if end == 0 || rest.as_bytes()[end] != b'/' {
        return None;
    }
    let (segment, capture) = rest.split_at(end);
    let (path, query) = split_query(capture);
    if path.bytes().all(|b| b == b'/') || query.is_some_and(|q| q.contains('\n')) {
        return None;
    }
    // The rewrite changes the target unless its segment is `-` already.
    (segment != "-").then(|| format!("{before}-{capture}"))
}

/// A candidate with the pairs that proposed it.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub rule: Rule,
    /// Bucket pairs that proposed it.
    pub proposals: u64,
    /// Why it was turned down before any evidence (a mode parameter).
    pub refused: Option<String>,
}

/// What the pairs say about one proposal.
#[derive(Debug, Default)]
struct Tallied {
    /// Agreeing pairs that proposed it.
    pairs: u64,
    /// The values of a parameter proposal's parameter (a few).
    values: Vec<String>,
    /// Hits on a substitution's `a` spelling minus hits on its `b` one.
    direction: i64,
}

/// What [`propose`] found in one host.
#[derive(Debug, Default)]
pub(crate) struct Proposals {
    pub candidates: Vec<Candidate>,
    /// Groups of URLs with one run of digits over `--bucket-cap`, which
    /// formed no pairs.
    pub skipped_buckets: u64,
    /// Candidates over `--max-candidates`, dropped (fewest proposals first).
    pub dropped: u64,
}

/// Parameters with few values each shared by many pages: `sort`, `view`,
/// `page`. Such a parameter may be a default, never irrelevant.
const MODE_VALUES: usize = 8;
const MODE_MIN_URLS: usize = 20;

/// The ways two URLs of a host can meet in their text (see [`text_pairs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    /// One query pair taken out of one URL gives the other.
    Param,
    /// The last path segment taken off one URL gives the other.
    Index,
    /// Both paths lower-cased are equal.
    Case,
    /// One path segment, with something after it, is all that differs.
    Slug,
    /// The same runs of digits, other text around them.
    Substitution,
}

impl View {
    /// The view a proposal belongs to: a pair is counted only for the
    /// family of the view that found it, so no pair counts twice.
    fn finds(self, p: &Proposal) -> bool {
        matches!(
            (self, p),
            (View::Param, Proposal::Param { .. })
                | (View::Index, Proposal::Index { .. })
                | (View::Case, Proposal::Case)
                | (View::Slug, Proposal::Slug { .. })
                | (View::Substitution, Proposal::Substitution { .. })
        )
    }
}

/// Query pairs of a URL one view takes out one at a time; past it, the
/// URL's other pairs are not tried (a query of hundreds of pairs is no page
/// spelled two ways, and would cost pairs × URLs).
const PAIRS_TRIED: usize = 32;
/// Path segments the slug view wildcards one at a time, at most.
const SEGMENTS_TRIED: usize = 16;
/// Spellings of one run of digits compared pairwise in the substitution
/// view, at most (their pairs grow as the square).
const SPELLINGS_TRIED: usize = 16;

/// Text keys are kept as 64-bit hashes (8 bytes a URL and view where the
/// keys took tens): two keys of one host with one hash are as likely as
/// 2^-64 a pair, and a pair met by accident is aligned again anyway, so it
/// proposes nothing.
fn text_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh64::xxh64(bytes, 0x6d69_6e65)
}

/// Visits the pairs of `urls` (one host) that meet when one thing is taken
/// out of their text, in near-linear time, each with the view that found
/// it (DustBuster's order: candidates from the URLs, sizes as evidence):
///
/// - **param**: a URL with one query pair removed is another URL of the
///   host (an irrelevant or default-valued parameter);
/// - **index**: `/dir/name` and `/dir/` (an index file);
/// - **case**: equal paths once lower-cased;
/// - **slug**: equal but for one path segment that something follows, each
///   position wildcarded in turn (`/p/123/a-title/x` ≡ `/p/123/b/x`);
/// - **substitution**: the same runs of digits (`/story?id=12` ↔
///   `/story_12`), in groups of at most `cap` URLs, at most
///   [`SPELLINGS_TRIED`] spellings a group.
///
/// Maps hold one entry per URL and view (one position at a time for the
/// slug view); star pairs (each URL against the first of its key) keep
/// the pairs linear in the URLs.
fn text_pairs(urls: &[UrlEntry], cap: usize, mut visit: impl FnMut(View, usize, usize)) -> u64 {
    let index = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
    // Keyed by `text_hash`es, looked up only (never walked): hashed again
    // by `hashbrown`'s quick hasher, not std's SipHash.
    let mut exact: hashbrown::HashMap<u64, u32> = hashbrown::HashMap::with_capacity(urls.len());
    for (i, u) in urls.iter().enumerate() {
        exact
            .entry(text_hash(u.target.as_bytes()))
            .or_insert(index(i));
    }
    let mut key = String::new();
    let meets = |key: &str, i: usize, view: View, visit: &mut dyn FnMut(View, usize, usize)| {
        if let Some(&j) = exact.get(&text_hash(key.as_bytes())) {
            if j as usize != i {
                visit(view, j as usize, i);
            }
        }
    };
    for (i, u) in urls.iter().enumerate() {
        let (path, query) = split_query(u.target);
        if let Some(q) = query {
            for out in 0..split_at_byte(q, b'&').take(PAIRS_TRIED).count() {
                key.clear();
                key.push_str(path);
                let mut sep = '?';
                for (k, pair) in split_at_byte(q, b'&').enumerate() {
                    if k != out {
                        key.push(sep);
                        key.push_str(pair);
                        sep = '&';
                    }
                }
                meets(&key, i, View::Param, &mut visit);
            }
        }
        if let Some(cut) = path.rfind('/').map(|c| c + 1).filter(|&c| c < path.len()) {
            key.clear();
            key.push_str(&path[..cut]);
            if let Some(q) = query {
                key.push('?');
                key.push_str(q);
            }
            meets(&key, i, View::Index, &mut visit);
        }
    }
    drop(exact);
    let mut first: hashbrown::HashMap<u64, u32> = hashbrown::HashMap::with_capacity(urls.len());
    let mut star = |key: &str, i: usize, view: View, first: &mut hashbrown::HashMap<u64, u32>| {
        let j = *first.entry(text_hash(key.as_bytes())).or_insert(index(i));
        if j as usize != i {
            visit(view, j as usize, i);
        }
    };
    for (i, u) in urls.iter().enumerate() {
        let (path, _) = split_query(u.target);
        key.clear();
        key.push_str(path);
        key.make_ascii_lowercase();
        key.push_str(&u.target[path.len()..]);
        star(&key, i, View::Case, &mut first);
    }
    let mut slashes: Vec<usize> = Vec::new();
    for position in 1..=SEGMENTS_TRIED {
        first.clear();
        let mut any = false;
        for (i, u) in urls.iter().enumerate() {
            let (path, _) = split_query(u.target);
            slashes.clear();
            // (Only the slashes up to the one that closes the segment.)
            slashes.extend(memchr::memchr_iter(b'/', path.as_bytes()).take(position + 1));
            // The segment after the `position`th slash, and what follows it.
            let (Some(&open), Some(&close)) = (slashes.get(position - 1), slashes.get(position))
            else {
                continue;
            };
            any = true;
            // A slug keeps something after it that tells pages apart.
            if close == open + 1 || path[close..].bytes().all(|b| b == b'/') {
                continue;
            }
            key.clear();
            key.push_str(&path[..=open]);
            key.push('\0');
            key.push_str(&u.target[close..]);
            star(&key, i, View::Slug, &mut first);
        }
        if !any {
            break;
        }
    }
    drop(first);
    let mut by_digits: HashMap<u64, Vec<u32>> = HashMap::new();
    for (i, u) in urls.iter().enumerate() {
        if !digit_runs(u.target, &mut key) {
            continue;
        }
        let list = by_digits.entry(text_hash(key.as_bytes())).or_default();
        // One more than the cap marks the group as too large.
        if list.len() <= cap {
            list.push(index(i));
        }
    }
    let too_large = by_digits.values().filter(|g| g.len() > cap).count() as u64;
    let mut groups: Vec<Vec<u32>> = by_digits
        .into_values()
        .filter(|g| g.len() > 1 && g.len() <= cap)
        .collect();
    groups.sort_unstable(); // a fixed order of visits
    for group in groups {
        let mut spellings: Vec<(String, u32)> = Vec::new();
        for &i in &group {
            let k = skeleton(urls[i as usize].target).0;
            if spellings.len() < SPELLINGS_TRIED && !spellings.iter().any(|(s, _)| *s == k) {
                spellings.push((k, i));
            }
        }
        for (x, (_, i)) in spellings.iter().enumerate() {
            for (_, j) in &spellings[x + 1..] {
                visit(View::Substitution, *i as usize, *j as usize);
            }
        }
    }
    too_large
}

/// Counts an agreeing pair for proposal `p`: the values a parameter is
/// seen with (one: a default; several: irrelevant), and for a substitution
/// which spelling is requested more (the canonical one).
fn tally(counts: &mut HashMap<Proposal, Tallied>, p: Proposal, a: &UrlEntry, b: &UrlEntry) {
    let value = match &p {
        Proposal::Param { name, .. } => {
            let with = if a.target.len() > b.target.len() {
                a
            } else {
                b
            };
            param_value(with.target, name)
        }
        _ => None,
    };
    let direction = match &p {
        Proposal::Substitution { a: ka, .. } => [a, b].iter().fold(0i64, |d, u| {
            let hits = i64::try_from(u.hits).unwrap_or(i64::MAX);
            if skeleton(u.target).0 == *ka {
                d.saturating_add(hits)
            } else {
                d.saturating_sub(hits)
            }
        }),
        _ => 0,
    };
    let entry = counts.entry(p).or_default();
    entry.pairs += 1;
    entry.direction = entry.direction.saturating_add(direction);
    if let Some(v) = value {
        if !entry.values.contains(&v) && entry.values.len() <= MODE_VALUES {
            entry.values.push(v);
        }
    }
}

/// Literal-alias proposals (`--literal-aliases`): pairs alone at one size
/// whose texts have nothing to align. Two static pages of one size by
/// chance come with their other spellings (a bucket of more), or are caught
/// by `--min-hits`.
fn literal_pairs(urls: &[UrlEntry], th: &Thresholds, counts: &mut HashMap<Proposal, Tallied>) {
    let mut order: Vec<(u64, usize)> = urls
        .iter()
        .enumerate()
        .filter_map(|(i, u)| u.learn.sig.map(|s| (s.size, i)))
        .collect();
    order.sort_unstable();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len()
            && order[end].0 - order[end - 1].0 <= super::evidence::tolerance(order[end].0)
        {
            end += 1;
        }
        let bucket = &order[start..end];
        start = end;
        let &[(_, i), (_, j)] = bucket else {
            continue;
        };
        let (a, b) = (&urls[i], &urls[j]);
        if align(a.target, b.target).is_some() || !agrees(a.learn_part(), b.learn_part()) {
            continue;
        }
        if let Some(p) = literal(a, b, th) {
            tally(counts, p, a, b);
        }
    }
}

/// Candidate rules from the text of `urls` (one host), with the pairs that
/// proposed each: a pair found by [`text_pairs`] proposes the rule its
/// difference stands for, and counts as support only when the two URLs'
/// sizes agree in the learning part (pairs that never agree propose no
/// candidate). Literal aliases, which no text relates, still come from
/// pairs alone at one size (`--literal-aliases`).
pub(crate) fn propose(urls: &[UrlEntry], th: &Thresholds) -> Proposals {
    let mut counts: HashMap<Proposal, Tallied> = HashMap::new();
    let skipped_buckets = text_pairs(urls, th.bucket_cap, |view, i, j| {
        let (a, b) = (&urls[i], &urls[j]);
        // Proposed by text, not supported by sizes: no candidate. The
        // sizes first: `agrees` costs a tenth of `align`, and half the
        // pairs a size bucket gives do not agree.
        if !agrees(a.learn_part(), b.learn_part()) {
            return;
        }
        if let Some(p) = align(a.target, b.target).filter(|p| view.finds(p)) {
            tally(&mut counts, p, a, b);
        }
    });
    let mut out = Proposals {
        skipped_buckets,
        ..Proposals::default()
    };
    if th.literal_aliases {
        literal_pairs(urls, th, &mut counts);
    }
    let mut list: Vec<(Proposal, Tallied)> = counts.into_iter().collect();
    // Most proposed first; ties in a fixed order, so the output is stable.
    list.sort_unstable_by(|x, y| y.1.pairs.cmp(&x.1.pairs).then_with(|| x.0.cmp(&y.0)));
    if list.len() > th.max_candidates {
        out.dropped = (list.len() - th.max_candidates) as u64;
        list.truncate(th.max_candidates);
    }
    for (
        p,
        Tallied {
            pairs,
            values,
            direction,
        },
    ) in list
    {
        let candidate = match p {
            Proposal::Param { prefix, name } => param_candidate(urls, prefix, name, &values),
            Proposal::Index { name } => Candidate {
                rule: Rule::IndexFile { name },
                proposals: 0,
                refused: None,
            },
            Proposal::Case => Candidate {
                rule: Rule::LowercasePath,
                proposals: 0,
                refused: None,
            },
            Proposal::Slug { before } => match slug_rule(&before) {
                Some(rule) => Candidate {
                    rule,
                    proposals: 0,
                    refused: None,
                },
                None => continue,
            },
            Proposal::Literal { from, to } => {
                let Ok(regex) = Regex::new(&skeleton_regex(&from)) else {
                    continue;
                };
                Candidate {
                    rule: Rule::Rewrite {
                        family: Family::Literal,
                        regex,
                        replace: skeleton_replacement(&to),
                        slug: None,
                    },
                    proposals: 0,
                    refused: None,
                }
            }
            Proposal::Substitution { a, b } => {
                // `direction` > 0: the `a` spelling has more hits: canonical.
                let (from, to) = if direction > 0 { (b, a) } else { (a, b) };
                let Ok(regex) = Regex::new(&skeleton_regex(&from)) else {
                    continue;
                };
                Candidate {
                    rule: Rule::Rewrite {
                        family: Family::Substitution,
                        regex,
                        replace: skeleton_replacement(&to),
                        slug: None,
                    },
                    proposals: 0,
                    refused: None,
                }
            }
        };
        out.candidates.push(Candidate {
            proposals: pairs,
            ..candidate
        });
    }
    out
}

/// Redirect candidates: a URL that answers only redirects (3xx, no 200)
/// in the learning part is paired with the URLs of its host that answer 200
/// and carry the same runs of digits (`/old/story/12` → `/story_12`); each
/// redirecting spelling goes to the target spelling most of its URLs pair
/// with, ties to the one with more hits. Without the redirect's `Location`
/// (an access log does not keep it) the digits are what links the two.
pub(crate) fn propose_redirects(urls: &[UrlEntry], th: &Thresholds) -> Vec<Candidate> {
    let redirecting = |u: &UrlEntry| u.learn.ok == 0 && u.learn.moved > 0;
    // Only the runs of digits some redirecting URL has are looked up: most
    // hosts have no such URL, and the others few, so the URLs that answer
    // 200 are grouped by only those, each with its skeleton (made once, not
    // once per redirecting URL it pairs with).
    let mut wanted: HashSet<String> = HashSet::new();
    let mut runs = String::new();
    for u in urls.iter().filter(|u| redirecting(u)) {
        if digit_runs(u.target, &mut runs) {
            wanted.insert(runs.clone());
        }
    }
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut by_digits: HashMap<String, Vec<(usize, String)>> = HashMap::new();
    for (i, u) in urls.iter().enumerate() {
        if u.learn.ok > 0 && digit_runs(u.target, &mut runs) && wanted.contains(&runs) {
            let list = by_digits.entry(runs.clone()).or_default();
            if list.len() < th.bucket_cap {
                list.push((i, skeleton(u.target).0));
            }
        }
    }
    // (from skeleton, to skeleton) -> (redirecting URLs, hits on the targets)
    let mut pairs: HashMap<(String, String), (u64, u64)> = HashMap::new();
    for u in urls.iter().filter(|u| redirecting(u)) {
        if !digit_runs(u.target, &mut runs) {
            continue;
        }
        let from = skeleton(u.target).0;
        for (j, to) in by_digits.get(&runs).map_or(&[][..], |v| &v[..]) {
            let e = pairs.entry((from.clone(), to.clone())).or_default();
            e.0 += 1;
            e.1 += urls[*j].hits;
        }
    }
    let mut best: HashMap<String, (String, (u64, u64))> = HashMap::new();
    for ((from, to), score) in pairs {
        let e = best.entry(from).or_insert_with(|| (to.clone(), score));
        if score > e.1 || (score == e.1 && to < e.0) {
            *e = (to, score);
        }
    }
    let mut list: Vec<_> = best.into_iter().collect();
    list.sort_by(|x, y| y.1 .1.cmp(&x.1 .1).then_with(|| x.0.cmp(&y.0)));
    list.truncate(th.max_candidates);
    list.into_iter()
        .filter_map(|(from, (to, (n, _)))| {
            Some(Candidate {
                rule: Rule::Rewrite {
                    family: Family::Redirect,
                    regex: Regex::new(&skeleton_regex(&from)).ok()?,
                    replace: skeleton_replacement(&to),
                    slug: None,
                },
                proposals: n,
                refused: None,
            })
        })
        .collect()
}

/// One redirect hint of a host (`hints.rs`): a redirect from `from` that
/// its client followed at once to `to` (targets from the path on), `count`
/// times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HintPair {
    pub from: String,
    pub to: String,
    pub count: u64,
}

/// Distinct hint pairs a rule needs to be proposed from hints alone: one
/// pair may be a client's two unrelated requests (a shared address).
const MIN_HINT_PAIRS: u64 = 2;

/// The rule one redirect says, when it is one the rules file can say:
/// the case of the path (`/About` → `/about`), an index file
/// (`/a/index.html` ↔ `/a/`), or an old path prefix for a new one
/// (`/old/x/y` → `/new/x/y`: the longest shared tail from a `/` on, with
/// something after that `/`, stays; what is before it is replaced). `None`
/// for a redirect the miner already reads as one page (a trailing `/`)
/// and for one with nothing to generalize.
pub(crate) fn hint_rule(from: &str, to: &str) -> Option<Rule> {
    if grouping_key(from) == grouping_key(to) {
        return None; // `/x` → `/x/`: one page to the miner already
    }
    let ((pf, qf), (pt, qt)) = (split_query(from), split_query(to));
    if qf == qt && pf != pt && pf.eq_ignore_ascii_case(pt) {
        return (pt.to_ascii_lowercase() == pt).then_some(Rule::LowercasePath);
    }
    if qf == qt {
        let (long, short) = if pf.len() > pt.len() {
            (pf, pt)
        } else {
            (pt, pf)
        };
        if let Some(name) = long.strip_prefix(short).filter(|_| short.ends_with('/')) {
            if !name.is_empty() && !name.contains('/') {
                return Some(Rule::IndexFile { name: name.into() });
            }
        }
    }
    // The longest shared tail, then from its first `/` on.
    let shared = from
        .bytes()
        .rev()
        .zip(to.bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let tail = &from[from.len() - shared..];
    let slash = tail.find('/')?;
    let tail = &tail[slash..];
    if tail.len() < 2 || tail.starts_with("//") {
        return None;
    }
    let old = &from[..from.len() - tail.len()];
    let new = &to[..to.len() - tail.len()];
    // An empty old prefix would rewrite every URL of the host (and its own
    // output again); a prefix with a query is no path prefix.
    if old.is_empty() || old.contains('?') || new.contains('?') || new.starts_with(old) {
        return None;
    }
    let regex = Regex::new(&format!("^{}(/.*)$", regex::escape(old))).ok()?;
    Some(Rule::Rewrite {
        family: Family::Moved,
        regex,
        replace: format!("{}${{1}}", new.replace('$', "$$")),
        slug: None,
    })
}

/// Candidates from a host's redirect hints: each hint's rule
/// ([`hint_rule`]), with the redirects that say it (their count) and its
/// distinct pairs; a rule needs [`MIN_HINT_PAIRS`] pairs. Most redirects
/// first.
pub(crate) fn from_hints(hints: &[HintPair], th: &Thresholds) -> Vec<(Candidate, u64)> {
    let mut by_rule: HashMap<String, (Rule, u64, u64)> = HashMap::new();
    for h in hints {
        if let Some(rule) = hint_rule(&h.from, &h.to) {
            let e = by_rule.entry(rule.describe()).or_insert((rule, 0, 0));
            e.1 += h.count;
            e.2 += 1;
        }
    }
    let mut list: Vec<(String, (Rule, u64, u64))> = by_rule
        .into_iter()
        .filter(|(_, (_, _, pairs))| *pairs >= MIN_HINT_PAIRS)
        .collect();
    list.sort_unstable_by(|x, y| y.1 .1.cmp(&x.1 .1).then_with(|| x.0.cmp(&y.0)));
    list.truncate(th.max_candidates);
    list.into_iter()
        .map(|(_, (rule, redirects, pairs))| {
            (
                Candidate {
                    rule,
                    proposals: pairs,
                    refused: None,
                },
                redirects,
            )
        })
        .collect()
}

fn param_value(target: &str, name: &str) -> Option<String> {
    let (_, query) = split_query(target);
    split_at_byte(query?, b'&').find_map(|p| match split_once_at_byte(p, b'=') {
        Some((k, v)) if k == name => Some(v.to_owned()),
        None if p == name => Some(String::new()),
        _ => None,
    })
}

/// An irrelevant parameter when its agreeing pairs show several values, a
/// default when one; a mode parameter (few values over many URLs) is never
/// irrelevant.
fn param_candidate(
    urls: &[UrlEntry],
    prefix: String,
    name: String,
    values: &[String],
) -> Candidate {
    if let [value] = values {
        return Candidate {
            rule: Rule::DefaultParam {
                prefix,
                name,
                value: value.clone(),
            },
            proposals: 0,
            refused: None,
        };
    }
    let mut seen: Vec<String> = Vec::new();
    let mut with = 0;
    for u in urls {
        if !under_prefix(split_query(u.target).0, &prefix) {
            continue;
        }
        if let Some(v) = param_value(u.target, &name) {
            with += 1;
            if seen.len() <= MODE_VALUES && !seen.contains(&v) {
                seen.push(v);
            }
        }
    }
    let refused = (seen.len() <= MODE_VALUES && with >= MODE_MIN_URLS).then(|| {
        format!(
            "mode parameter: {} values over {with} URLs, and pairs with several of them agree (reorders the page?)",
            seen.len()
        )
    });
    Candidate {
        rule: Rule::DropParam { prefix, name },
        proposals: 0,
        refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `split_at_byte` cuts as `str::split` does (and `split_once_at_byte`
    /// as `str::split_once`): empty pieces at either end and between
    /// separators, non-ASCII text around them.
    #[test]
    fn split_at_byte_is_str_split() {
        for text in [
            "",
            "&",
            "&&",
            "a",
            "a&",
            "&a",
            "a&b",
            "a&&b",
            "&a&b&",
            "é&ü=1&",
            "/",
            "/a/b/",
            "//x//",
            "/p/ä/é.html",
            "x=1&y=%26&z",
        ] {
            for sep in [b'&', b'/'] {
                let ours: Vec<&str> = split_at_byte(text, sep).collect();
                let std: Vec<&str> = text.split(char::from(sep)).collect();
                assert_eq!(ours, std, "{text:?} at {:?}", char::from(sep));
                assert_eq!(
                    split_once_at_byte(text, sep),
                    text.split_once(char::from(sep)),
                    "{text:?} at {:?}",
                    char::from(sep)
                );
            }
        }
    }

    #[test]
    fn pairs_align_into_one_family_each() {
        let p = |a, b| align(a, b);
        assert_eq!(
            p("/product/?id=4&ref=promo", "/product/?id=4"),
            Some(Proposal::Param {
                prefix: "/product/".into(),
                name: "ref".into()
            })
        );
        // A value that differs is not a parameter that is absent.
        assert_eq!(p("/c?cat=1&page=2", "/c?cat=1&page=3"), None);
        assert_eq!(
            p("/Products/W-1.aspx", "/products/w-1.aspx"),
            Some(Proposal::Case)
        );
        assert_eq!(
            p("/sports/home.html", "/sports/"),
            Some(Proposal::Index {
                name: "home.html".into()
            })
        );
        assert_eq!(
            p(
                "/books/red-lamp/978123-item.html",
                "/books/x/978123-item.html"
            ),
            Some(Proposal::Slug {
                before: vec!["books".into()]
            })
        );
        // The last segment is no slug: nothing after it tells pages apart.
        assert_eq!(p("/p/red/", "/p/blue/"), None);
        assert_eq!(
            p("/story/?id=48", "/story_48/"),
            Some(Proposal::Substitution {
                a: "/story/?id=\0".into(),
                b: "/story_\0/".into()
            })
        );
        // Other digits: not one page spelled twice.
        assert_eq!(p("/story/?id=48", "/story_49/"), None);
    }

    #[test]
    fn substitution_rules_allow_the_trailing_slash_and_capture_digits() {
        let re = Regex::new(&skeleton_regex("/story/?id=\0")).unwrap();
        assert!(re.is_match("/story?id=12"));
        assert!(re.is_match("/story/?id=12"));
        assert!(!re.is_match("/story?id=12&x=1"));
        let rule = Rule::Rewrite {
            family: Family::Substitution,
            regex: re,
            replace: skeleton_replacement("/story_\0/"),
            slug: None,
        };
        assert_eq!(rule.apply("/story/?id=12").as_deref(), Some("/story_12"));
        assert_eq!(rule.apply("/story_12/"), None);
    }

    #[test]
    fn slug_rules_apply_as_their_regex_does() {
        // Every target of up to six characters of an alphabet with the
        // bytes the regex tells apart (and a two-byte character), after
        // paths that do and do not start with the rule's.
        const ALPHABET: [&str; 7] = ["/", "?", "-", "a", "\n", "é", "."];
        let mut tails = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..6 {
            last = last
                .iter()
                .flat_map(|t| ALPHABET.iter().map(move |c| format!("{t}{c}")))
                .collect();
            tails.extend(last.iter().cloned());
        }
        let befores: [&[&str]; 4] = [&[], &["books"], &["a.b", "$1"], &["é", "-"]];
        let mut rewritten = 0;
        for before in befores {
            let segs: Vec<String> = before.iter().map(|s| s.to_string()).collect();
            let fast = slug_rule(&segs).unwrap();
            let Rule::Rewrite { regex, replace, .. } = &fast else {
                panic!("a slug rule is a rewrite");
            };
            let by_regex = Rule::Rewrite {
                family: Family::Slug,
                regex: regex.clone(),
                replace: replace.clone(),
                slug: None,
            };
            let literal = format!(
                "/{}",
                segs.iter().map(|s| format!("{s}/")).collect::<String>()
            );
            for start in [literal.as_str(), "/", "/books", "/x/"] {
                for tail in &tails {
                    let target = format!("{start}{tail}");
                    let want = by_regex.apply(&target);
                    rewritten += usize::from(want.is_some());
                    assert_eq!(fast.apply(&target), want, "{target:?} under {literal:?}");
                }
            }
        }
        assert!(rewritten > 10_000, "{rewritten}");
    }

    #[test]
    fn rules_apply_as_the_rules_file_would() {
        let drop = Rule::DropParam {
            prefix: "/product/".into(),
            name: "ref".into(),
        };
        assert_eq!(
            drop.apply("/product/?id=1&ref=x").as_deref(),
            Some("/product/?id=1")
        );
        assert_eq!(drop.apply("/product/?ref=x").as_deref(), Some("/product/"));
        assert_eq!(drop.apply("/other/?ref=x"), None);
        let default = Rule::DefaultParam {
            prefix: "/".into(),
            name: "page".into(),
            value: "1".into(),
        };
        assert_eq!(
            default.apply("/c/?cat=2&page=1").as_deref(),
            Some("/c/?cat=2")
        );
        assert_eq!(default.apply("/c/?cat=2&page=2"), None);
        let index = Rule::IndexFile {
            name: "home.html".into(),
        };
        assert_eq!(index.apply("/a/home.html").as_deref(), Some("/a/"));
        assert_eq!(index.apply("/a/other.html"), None);
        assert_eq!(
            Rule::LowercasePath.apply("/A/B?Q=1").as_deref(),
            Some("/a/b?Q=1")
        );
        let slug = slug_rule(&["books".into()]).unwrap();
        assert_eq!(
            slug.apply("/books/red/9781-item.html").as_deref(),
            Some("/books/-/9781-item.html")
        );
        assert_eq!(slug.apply("/books/red/"), None);
        assert_eq!(grouping_key("/a/b/?x"), "/a/b?x");
        assert_eq!(grouping_key("/"), "/");
    }

    /// A URL answering 200 with `size` in window 0 of each part. (Its
    /// target and windows are leaked: a test's few bytes.)
    fn entry(target: &str, size: u64) -> UrlEntry<'static> {
        let sig = super::super::evidence::Signature {
            size,
            strong: true,
            lo: size,
            span: 0,
        };
        let side = Side {
            sig: Some(sig),
            ok: 4,
            ..Side::default()
        };
        let window = WindowSize::new(0, &sig).unwrap();
        UrlEntry {
            target: String::leak(target.to_owned()),
            hits: 4,
            learn: side,
            confirm: side,
            windows: Vec::leak(vec![window, window]),
            learned: 1,
        }
    }

    #[test]
    fn digit_runs_and_grouping_keys_are_written_in_place() {
        // `digit_runs` stands for `skeleton`'s runs joined by `/` (the
        // miner groups URLs by that text); `push_grouping_key` appends a
        // target's key without its path's final `/` or an empty query.
        let mut runs = String::from("left over");
        let mut keys = String::from("/before");
        for (target, key) in [
            ("/", "/"),
            ("/a/b/?x", "/a/b?x"),
            ("/story_7/", "/story_7"),
            ("/old/story/7/?p=12&q=003", "/old/story/7?p=12&q=003"),
            ("/é9ü/10x20?y=", "/é9ü/10x20?y="),
            ("/a/?", "/a"),
            ("123", "123"),
            ("/x//", "/x/"),
        ] {
            let digits = skeleton(target).1;
            assert_eq!(
                digit_runs(target, &mut runs),
                !digits.is_empty(),
                "{target}"
            );
            assert_eq!(runs, digits.join("/"), "{target}");
            let start = keys.len();
            push_grouping_key(target, &mut keys);
            assert_eq!(&keys[start..], key, "{target}");
            assert_eq!(grouping_key(target), key, "{target}");
        }
        assert!(keys.starts_with("/before/"));
    }

    #[test]
    fn a_url_that_only_redirects_goes_to_the_page_with_its_digits() {
        let mut urls = vec![entry("/story_7/", 30_000), entry("/story/?id=7", 30_000)];
        urls[0].hits = 9;
        let mut old = entry("/old/story/7/", 0);
        old.learn = Side {
            moved: 3,
            ..Side::default()
        };
        urls.push(old);
        let found = propose_redirects(&urls, &Thresholds::default());
        let [c] = &found[..] else { panic!("{found:?}") };
        assert_eq!(c.rule.apply("/old/story/12").as_deref(), Some("/story_12"));
        assert_eq!(c.rule.family(), Family::Redirect);
    }

    #[test]
    fn a_literal_alias_needs_exact_sizes_many_hits_and_one_query() {
        let th = Thresholds {
            literal_aliases: true,
            ..Thresholds::default()
        };
        assert_eq!(
            literal(
                &entry("/a/", 9_000),
                &entry("/b/", 9_000),
                &Thresholds::default()
            ),
            None,
            "off by default"
        );
        let mut about = entry("/company/about/", 9_000);
        let mut about_us = entry("/about-us/", 9_000);
        about.learn.ok = 40;
        about.hits = 40;
        about_us.learn.ok = 20;
        about_us.hits = 20;
        let p = literal(&about, &about_us, &th);
        assert_eq!(
            p,
            Some(Proposal::Literal {
                from: "/about-us/".into(),
                to: "/company/about/".into()
            })
        );
        // Too few requests on one side.
        about_us.learn.ok = 19;
        assert_eq!(literal(&about, &about_us, &th), None);
        about_us.learn.ok = 20;
        // Nearly the same size (within tolerance), not the same cluster.
        if let Some(s) = about_us.learn.sig.as_mut() {
            s.span += 3;
        }
        assert_eq!(literal(&about, &about_us, &th), None);
        // Other ids: other things.
        let mut job = entry("/jobs/436/", 9_000);
        job.learn.ok = 50;
        let mut other = entry("/jobs/691/", 9_000);
        other.learn.ok = 50;
        assert_eq!(literal(&job, &other, &th), None);
        // Another query value is no alias: it may reorder the page.
        let mut asc = entry("/c/?cat=1&sort=asc", 9_000);
        let mut desc = entry("/c/?cat=1&sort=desc", 9_000);
        asc.learn.ok = 50;
        desc.learn.ok = 50;
        assert_eq!(literal(&asc, &desc, &th), None);
    }

    #[test]
    fn a_parameter_with_few_values_on_many_urls_is_not_irrelevant() {
        let mut urls = Vec::new();
        for c in 0..12 {
            let size = 20_000 + 1_000 * c;
            urls.push(entry(&format!("/catalog/?cat={c}"), size));
            urls.push(entry(&format!("/catalog/?cat={c}&sort=asc"), size));
            urls.push(entry(&format!("/catalog/?cat={c}&sort=desc"), size));
            urls.push(entry(&format!("/catalog/?cat={c}&page=1"), size));
        }
        let found = propose(&urls, &Thresholds::default());
        let sort = found
            .candidates
            .iter()
            .find(|c| matches!(&c.rule, Rule::DropParam { name, .. } if name == "sort"))
            .unwrap();
        assert!(sort.refused.as_deref().unwrap().contains("mode"));
        assert!(found.candidates.iter().any(|c| matches!(&c.rule,
            Rule::DefaultParam { name, value, .. } if name == "page" && value == "1")));
    }

    /// The pairs [`text_pairs`] visits among `targets` whose difference is
    /// the one their view looks for, as (view, a, b) with `a < b`.
    fn met(targets: &[&str]) -> Vec<(View, String, String)> {
        let urls: Vec<UrlEntry> = targets.iter().map(|t| entry(t, 1_000)).collect();
        let mut pairs = Vec::new();
        text_pairs(&urls, 64, |view, i, j| {
            let (a, b) = (urls[i].target.to_owned(), urls[j].target.to_owned());
            // What `propose` counts: the pairs whose difference is their view's.
            if align(&a, &b).is_some_and(|p| view.finds(&p)) {
                pairs.push(if a < b { (view, a, b) } else { (view, b, a) });
            }
        });
        pairs.sort_by(|x, y| (x.1.as_str(), x.2.as_str()).cmp(&(y.1.as_str(), y.2.as_str())));
        pairs
    }

    #[test]
    fn urls_meet_when_one_thing_is_taken_out_of_their_text() {
        let pair = |v: View, a: &str, b: &str| (v, a.to_owned(), b.to_owned());
        assert_eq!(
            met(&["/a?x=1&ref=b", "/a?x=1", "/b?x=2"]),
            [pair(View::Param, "/a?x=1", "/a?x=1&ref=b")]
        );
        assert_eq!(
            met(&["/dir/index.php", "/dir/", "/other/page.php"]),
            [pair(View::Index, "/dir/", "/dir/index.php")]
        );
        assert_eq!(
            met(&["/A/B?Q=1", "/a/b?Q=1", "/a/b?q=x"]),
            [pair(View::Case, "/A/B?Q=1", "/a/b?Q=1")]
        );
        assert_eq!(
            met(&["/p/123/a-title/x", "/p/123/b/x", "/p/124/c/"]),
            [pair(View::Slug, "/p/123/a-title/x", "/p/123/b/x")]
        );
        assert_eq!(
            met(&["/story?id=12", "/story_12", "/story_13"]),
            [pair(View::Substitution, "/story?id=12", "/story_12")]
        );
        // Two differences at once: no view joins them.
        assert_eq!(met(&["/a?x=1", "/b?x=1&y=2", "/C/d"]), []);
    }

    #[test]
    fn a_common_number_forms_no_substitution_pairs() {
        // 70 URLs carry the run `1` (> the cap of 64): a page number, not an id.
        let mut targets: Vec<String> = (1..=70)
            .map(|n| format!("/list-{}?page=1", "a".repeat(n)))
            .collect();
        targets.push("/story_1".into());
        targets.push("/story?id=1".into());
        let urls: Vec<UrlEntry> = targets.iter().map(|t| entry(t, 1_000)).collect();
        let mut subst = 0;
        let skipped = text_pairs(&urls, 64, |v, _, _| {
            subst += u32::from(v == View::Substitution)
        });
        assert_eq!((subst, skipped), (0, 1));
        // Under the cap, the two spellings of story 1 meet.
        let skipped = text_pairs(&urls[70..], 64, |v, _, _| {
            subst += u32::from(v == View::Substitution)
        });
        assert_eq!((subst, skipped), (1, 0));
    }

    /// Pages whose sizes lie close together (a dynamic site) chain into one
    /// vague size bucket; their spellings still meet by their text.
    #[test]
    fn candidates_come_from_text_when_sizes_chain() {
        let mut urls = Vec::new();
        for n in 0..60u64 {
            let size = 20_000 + 9 * n; // within tolerance of the next page
            urls.push(entry(&format!("/story_{}", 1_000 + n), size));
            urls.push(entry(&format!("/story?id={}", 1_000 + n), size));
            urls.push(entry(&format!("/item/{}/x", 1_000 + n), 50_000 + 1_000 * n));
        }
        let found = propose(&urls, &Thresholds::default());
        let subst = found
            .candidates
            .iter()
            .find(|c| c.rule.family() == Family::Substitution)
            .expect("the substitution is proposed");
        assert_eq!(subst.proposals, 60);
        assert_eq!(
            subst.rule.apply("/story?id=1042").as_deref(),
            Some("/story_1042")
        );
        // `/item/N/x` shares each story's digits but not its size (nor the
        // other items'): it proposes nothing, although its text meets theirs.
        assert!(found
            .candidates
            .iter()
            .all(|c| c.rule.apply("/item/1001/x").is_none()));
    }

    #[test]
    fn a_followed_redirect_says_a_rule_when_the_rules_file_can_say_it() {
        let said = |from: &str, to: &str| hint_rule(from, to).map(|r| r.describe());
        assert_eq!(
            said("/old/docs/a-b.html", "/new/docs/a-b.html").as_deref(),
            Some("rewrite ^/old(/.*)$ -> /new${1}")
        );
        assert_eq!(
            said("/kb/x?lang=en", "/help/articles/x?lang=en").as_deref(),
            Some("rewrite ^/kb(/.*)$ -> /help/articles${1}")
        );
        // A prefix dropped is a prefix rewritten to nothing.
        assert_eq!(
            said("/en/about", "/about").as_deref(),
            Some("rewrite ^/en(/.*)$ -> ${1}")
        );
        assert_eq!(
            said("/a/index.php", "/a/").as_deref(),
            Some("extra-index-files index.php")
        );
        assert_eq!(
            said("/About/Team", "/about/team").as_deref(),
            Some("+lowercase-path")
        );
        for (from, to) in [
            ("/x", "/x/"),                                // one page to the miner already
            ("/about", "/en/about"),                      // an empty old prefix: every URL
            ("/a/b", "/a/b/c/b"),                         // the new prefix starts with the old
            ("/account/x", "/login?next=%2Faccount%2Fx"), // a login, not a move
            ("/old/x", "/new/y"),                         // nothing shared to keep
            ("/a/b", "/c/"),                              // only the `/` shared
            ("/About", "/ABOUT"),                         // case, but not to lower case
        ] {
            assert_eq!(said(from, to), None, "{from} -> {to}");
        }
    }

    #[test]
    fn hints_propose_a_rule_when_two_pairs_say_it() {
        let pair = |from: &str, to: &str, count| HintPair {
            from: from.into(),
            to: to.into(),
            count,
        };
        let th = Thresholds::default();
        let found = from_hints(
            &[
                pair("/old/a", "/new/a", 3),
                pair("/old/b", "/new/b", 4),
                pair("/was/a", "/is/a", 9),
                pair("/x", "/x/", 5),
            ],
            &th,
        );
        // `/was/` → `/is/` has one pair only, however often it was followed.
        assert_eq!(found.len(), 1, "{found:?}");
        let (c, redirects) = &found[0];
        assert_eq!(c.rule.describe(), "rewrite ^/old(/.*)$ -> /new${1}");
        assert_eq!((c.proposals, *redirects), (2, 7));
    }
}
