//! Dedup rules: the rewrites past RFC 3986 that make URLs serving the same
//! page collapse to one key, each named, documented, and switchable.
//!
//! A rule runs on a URL that is already canonical (`rfc3986`): components
//! are in their serialized form, unreserved escapes decoded, hex upper-cased.
//! So a rule compares bytes, never decodes, and never has to guess a
//! component's boundaries: `apply` rebuilds the URL one
//! component at a time from a copy of it, into the caller's buffer.
//!
//! No rule decodes a reserved escape (`%2F`, `%26`, `%3D`, `%2B`, `%3F`,
//! `%23`): `%2B` in a query is a literal plus, `+` is a space, and only the
//! `query-space` rule writes both spaces the same way (`%20`).
//!
//! Which rules run is a [`RuleMask`]. A profile gives the starting mask (its
//! tier), `--rule +name,-name` and a rules file ([`file`](mod@file)) edit it, and a
//! rules file can give each host (exact or `*.example.com`) its own mask and
//! lists. Everything per host is resolved when the [`RuleSet`] is built, so a
//! URL costs one host lookup, and none without host sections.

pub(crate) mod apply;
pub mod file;
pub(crate) mod glob;
pub(crate) mod rewrite;

use std::fmt;
use std::sync::Arc;

use hashbrown::HashMap;

use glob::Glob;
use rewrite::Rewrite;

/// One dedup rule. The order is the order of [`Rule::ALL`], used for bits,
/// reports and documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Rule {
    /// Remove the fragment.
    Fragment,
    /// Remove an empty query, stray `&`, pairs with an empty name or value.
    EmptyQuery,
    /// Remove a directory index file name, keeping the `/`.
    IndexFile,
    /// Remove `www.`/`wwwN.` when a registrable domain remains.
    Www,
    /// Sort query parameters.
    SortQuery,
    /// Remove tracking parameters.
    Tracking,
    /// Remove session ids in query and path, and state parameters.
    Session,
    /// Collapse `//` in the path.
    DuplicateSlashes,
    /// Trailing-slash policy for the last path segment.
    TrailingSlash,
    /// Write `+` in the query as `%20`.
    QuerySpace,
    /// Lower-case the path.
    LowercasePath,
    /// Write `https` as `http`.
    HttpsAsHttp,
    /// Remove userinfo.
    Userinfo,
    /// Remove parameters that carry their default value.
    DefaultParams,
    /// Write IPv4-mapped and NAT64 IPv6 hosts as dotted IPv4.
    Ipv4Mapped,
    /// Remove a trailing dot from the host.
    HostTrailingDot,
    /// User rewrite rules, after all the others.
    Rewrite,
}

/// How safe a rule is, which decides the profiles it is in by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// In `safe` and `aggressive`: safe for server-side dedup in practice.
    Safe,
    /// In `aggressive` only: usually right, wrong for some sites.
    Aggressive,
    /// In no profile: switch it on with `--rule +name` or per host.
    OptIn,
}

impl Tier {
    /// The tier's name in documentation and `--list-rules`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Safe => "safe",
            Tier::Aggressive => "aggressive",
            Tier::OptIn => "opt-in",
        }
    }
}

impl Rule {
    /// Every rule, in bit and report order.
    pub const ALL: [Rule; 17] = [
        Rule::Fragment,
        Rule::EmptyQuery,
        Rule::IndexFile,
        Rule::Www,
        Rule::SortQuery,
        Rule::Tracking,
        Rule::Session,
        Rule::DuplicateSlashes,
        Rule::TrailingSlash,
        Rule::QuerySpace,
        Rule::LowercasePath,
        Rule::HttpsAsHttp,
        Rule::Userinfo,
        Rule::DefaultParams,
        Rule::Ipv4Mapped,
        Rule::HostTrailingDot,
        Rule::Rewrite,
    ];

    /// The rule's name on the command line, in rules files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Fragment => "fragment",
            Rule::EmptyQuery => "empty-query",
            Rule::IndexFile => "index-file",
            Rule::Www => "www",
            Rule::SortQuery => "sort-query",
            Rule::Tracking => "tracking",
            Rule::Session => "session",
            Rule::DuplicateSlashes => "duplicate-slashes",
            Rule::TrailingSlash => "trailing-slash",
            Rule::QuerySpace => "query-space",
            Rule::LowercasePath => "lowercase-path",
            Rule::HttpsAsHttp => "https-as-http",
            Rule::Userinfo => "userinfo",
            Rule::DefaultParams => "default-params",
            Rule::Ipv4Mapped => "ipv4-mapped",
            Rule::HostTrailingDot => "host-trailing-dot",
            Rule::Rewrite => "rewrite",
        }
    }

    /// The rule's tier.
    pub fn tier(self) -> Tier {
        match self {
            Rule::Fragment
            | Rule::EmptyQuery
            | Rule::Tracking
            | Rule::Session
            | Rule::Userinfo
            | Rule::DefaultParams
            | Rule::HostTrailingDot
            | Rule::Rewrite => Tier::Safe,
            Rule::IndexFile
            | Rule::Www
            | Rule::SortQuery
            | Rule::DuplicateSlashes
            | Rule::TrailingSlash
            | Rule::QuerySpace
            | Rule::Ipv4Mapped => Tier::Aggressive,
            Rule::LowercasePath | Rule::HttpsAsHttp => Tier::OptIn,
        }
    }

    /// One line on what the rule does, for `--list-rules`.
    pub fn effect(self) -> &'static str {
        match self {
            Rule::Fragment => "remove the fragment (#...): browsers never send it",
            Rule::EmptyQuery => {
                "remove an empty query '?', stray '&', and pairs with an empty name (=1) or value (id=)"
            }
            Rule::IndexFile => {
                "remove a directory index file (index.html, default.aspx, ...) keeping the '/'"
            }
            Rule::Www => {
                "remove www. / wwwN. when what remains is still a registrable domain (Public Suffix List)"
            }
            Rule::SortQuery => "sort query parameters (stable, by key; or key then value)",
            Rule::Tracking => "remove tracking parameters (utm_*, gclid, fbclid, ...)",
            Rule::Session => {
                "remove session ids (jsessionid, PHPSESSID, ;jsessionid=, /(S(...))/) and state parameters"
            }
            Rule::DuplicateSlashes => "collapse '//' in the path to '/'",
            Rule::TrailingSlash => {
                "trailing-slash policy for the last segment: remove (default), add (no dot), keep"
            }
            Rule::QuerySpace => "write '+' in the query as '%20' (both mean space in forms)",
            Rule::LowercasePath => "lower-case the path (case-insensitive servers such as IIS)",
            Rule::HttpsAsHttp => "treat http and https as one scheme (written http)",
            Rule::Userinfo => "remove user:password@",
            Rule::DefaultParams => "remove parameters that carry their default value (rules file)",
            Rule::Ipv4Mapped => "write IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96) hosts as IPv4",
            Rule::HostTrailingDot => "remove a trailing dot from the host",
            Rule::Rewrite => "user rewrite rules (literal or regex, per host), after the others",
        }
    }

    /// The rule named `name`.
    pub fn from_name(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == name)
    }

    fn bit(self) -> u32 {
        1 << self as u8
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of rules, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RuleMask(pub u32);

impl RuleMask {
    /// No rule.
    pub const NONE: RuleMask = RuleMask(0);

    /// The rules of `tier` and the safer tiers (`OptIn` gives every rule).
    pub fn up_to(tier: Tier) -> RuleMask {
        let mut m = RuleMask::NONE;
        for r in Rule::ALL {
            let inside = match tier {
                Tier::Safe => r.tier() == Tier::Safe,
                Tier::Aggressive => r.tier() != Tier::OptIn,
                Tier::OptIn => true,
            };
            if inside {
                m.insert(r);
            }
        }
        m
    }

    /// Whether `rule` is in the set.
    #[inline]
    pub fn has(self, rule: Rule) -> bool {
        self.0 & rule.bit() != 0
    }

    /// Adds `rule`.
    #[inline]
    pub fn insert(&mut self, rule: Rule) {
        self.0 |= rule.bit();
    }

    /// Removes `rule`.
    pub fn remove(&mut self, rule: Rule) {
        self.0 &= !rule.bit();
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The rules in the set, in [`Rule::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Rule> {
        Rule::ALL.into_iter().filter(move |r| self.has(*r))
    }
}

impl fmt::Display for RuleMask {
    /// Comma-separated names, or `-` for none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        for (i, r) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(r.name())?;
        }
        Ok(())
    }
}

/// What the `trailing-slash` rule does with the last path segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TrailingSlash {
    /// `/a/b/` becomes `/a/b` (the root `/` stays).
    #[default]
    Remove,
    /// `/a/b` becomes `/a/b/`, only when the last segment has no `.` (a
    /// segment with a dot is usually a file: `/a/b.html` stays).
    Add,
    /// Leave it.
    Keep,
}

/// How the `sort-query` rule orders parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SortQuery {
    /// Stable sort by key: repeated keys keep their order (`a=2&a=1` stays).
    #[default]
    Key,
    /// By key, then by value.
    KeyValue,
    /// Leave the order.
    Off,
}

/// A session parameter: a name glob and what its value must look like.
#[derive(Clone, Debug)]
pub struct SessionParam {
    /// The name (case-insensitive glob).
    pub name: Glob,
    /// Only values of 32 hex digits (`sid`, which is too short a name to
    /// remove whatever its value).
    pub hex32: bool,
}

impl SessionParam {
    /// Parses `name` or `name=hex32`.
    pub fn parse(s: &str) -> Result<SessionParam, String> {
        let (name, hex32) = match s.split_once('=') {
            None => (s, false),
            Some((n, "hex32")) => (n, true),
            Some((_, v)) => {
                return Err(format!(
                    "session parameter '{s}': the only value pattern is '=hex32', not '={v}'"
                ))
            }
        };
        Ok(SessionParam {
            name: Glob::new(name)?,
            hex32,
        })
    }

    fn matches(&self, name: &[u8], value: &[u8]) -> bool {
        self.name.matches(name)
            && (!self.hex32 || (value.len() == 32 && value.iter().all(u8::is_ascii_hexdigit)))
    }
}

/// Index file names removed by `index-file` unless a rules file says otherwise.
pub const DEFAULT_INDEX_FILES: &[&str] = &[
    "index.html",
    "index.htm",
    "index.php",
    "index.asp",
    "index.aspx",
    "index.jsp",
    "index.shtml",
    "index.cgi",
    "default.aspx",
    "default.asp",
    "default.htm",
    "default.html",
];

/// Tracking parameters removed by `tracking` unless a rules file says otherwise:
/// campaign tags (Google Analytics `utm_*`), ad click ids of the big ad
/// networks, e-mail campaign ids, and the analytics cross-domain linkers.
pub const DEFAULT_TRACKING: &[&str] = &[
    "utm_*",
    "gclid",
    "gclsrc",
    "gbraid",
    "wbraid",
    "dclid",
    "fbclid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "yclid",
    "_ga",
    "_gl",
    "igshid",
    "twclid",
    "ttclid",
    "li_fat_id",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
    "srsltid",
    "_openstat",
    "oly_anon_id",
    "oly_enc_id",
    "vero_id",
];

/// Session parameters removed by `session` unless a rules file says otherwise.
pub const DEFAULT_SESSION: &[&str] = &[
    "jsessionid",
    "phpsessid",
    "aspsessionid*",
    "cfid",
    "cftoken",
    "sid=hex32",
];

/// Everything one host's URLs are canonicalized with.
#[derive(Clone, Debug)]
pub struct Config {
    /// The rules that run.
    pub enabled: RuleMask,
    /// `trailing-slash` policy.
    pub trailing_slash: TrailingSlash,
    /// `sort-query` order.
    pub sort: SortQuery,
    /// Parameters that `sort-query` leaves where they are (exact names).
    pub keep_position: Vec<Vec<u8>>,
    /// Index file names, lower-case (matched ASCII case-insensitively).
    pub index_files: Vec<Vec<u8>>,
    /// Tracking parameter globs.
    pub tracking: Vec<Glob>,
    /// Session parameters.
    pub session: Vec<SessionParam>,
    /// Temporary state parameters (`session` removes them too).
    pub state: Vec<Glob>,
    /// `(name, value)` pairs that `default-params` removes.
    pub defaults: Vec<(Vec<u8>, Vec<u8>)>,
    /// `rewrite` rules, in order.
    pub rewrites: Vec<Arc<Rewrite>>,
    /// First bytes (lower-cased) of names that some parameter list can match:
    /// a parameter whose name starts elsewhere skips every list.
    first_bytes: [bool; 256],
}

impl Config {
    /// The configuration of `profile`'s tier with the default lists.
    pub fn for_mask(enabled: RuleMask) -> Config {
        let mut c = Config {
            enabled,
            trailing_slash: TrailingSlash::default(),
            sort: SortQuery::default(),
            keep_position: Vec::new(),
            index_files: DEFAULT_INDEX_FILES
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect(),
            tracking: DEFAULT_TRACKING
                .iter()
                .map(|s| Glob::new(s).expect("default globs are valid"))
                .collect(),
            session: DEFAULT_SESSION
                .iter()
                .map(|s| SessionParam::parse(s).expect("default session params are valid"))
                .collect(),
            state: Vec::new(),
            defaults: Vec::new(),
            rewrites: Vec::new(),
            first_bytes: [false; 256],
        };
        c.finish();
        c
    }

    /// Recomputes what is derived from the lists.
    fn finish(&mut self) {
        let mut fb = [false; 256];
        let mut any = false;
        for g in self
            .tracking
            .iter()
            .chain(self.session.iter().map(|s| &s.name))
            .chain(self.state.iter())
        {
            match g.first_literal() {
                Some(b) => {
                    fb[b as usize] = true;
                    fb[b.to_ascii_uppercase() as usize] = true;
                }
                None => any = true,
            }
        }
        for (name, _) in &self.defaults {
            if let Some(&b) = name.first() {
                fb[b as usize] = true;
            }
        }
        if any {
            fb = [true; 256];
        }
        self.first_bytes = fb;
    }

    /// Why the query rules should drop a parameter, if they should.
    #[inline]
    pub(crate) fn drop_param(&self, name: &[u8], value: &[u8]) -> Option<Rule> {
        let first = *name.first()?;
        if !self.first_bytes[first as usize] {
            return None;
        }
        self.drop_param_slow(name, value)
    }

    fn drop_param_slow(&self, name: &[u8], value: &[u8]) -> Option<Rule> {
        let on = self.enabled;
        if on.has(Rule::Tracking) && self.tracking.iter().any(|g| g.matches(name)) {
            return Some(Rule::Tracking);
        }
        if on.has(Rule::Session)
            && (self.session.iter().any(|s| s.matches(name, value))
                || self.state.iter().any(|g| g.matches(name)))
        {
            return Some(Rule::Session);
        }
        if on.has(Rule::DefaultParams)
            && self
                .defaults
                .iter()
                .any(|(n, v)| n.as_slice() == name && v.as_slice() == value)
        {
            return Some(Rule::DefaultParams);
        }
        None
    }
}

/// One edit of a rule mask or option, as `--rule` and rules files give them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// `+name` or `name`.
    On(Rule),
    /// `-name`.
    Off(Rule),
    /// `trailing-slash=add|remove|keep` (also switches the rule on).
    TrailingSlash(TrailingSlash),
    /// `sort-query=key|key-value|off`.
    Sort(SortQuery),
}

impl Edit {
    /// Parses a comma-separated list: `+fragment,-www,trailing-slash=add`.
    pub fn parse_list(s: &str) -> Result<Vec<Edit>, String> {
        s.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(Edit::parse)
            .collect()
    }

    /// Parses one edit.
    pub fn parse(s: &str) -> Result<Edit, String> {
        let rule = |name: &str| {
            Rule::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
                format!("unknown rule '{name}' (rules: {})", names.join(", "))
            })
        };
        if let Some((name, value)) = s.split_once('=') {
            return match (name, value) {
                ("trailing-slash", "remove") => Ok(Edit::TrailingSlash(TrailingSlash::Remove)),
                ("trailing-slash", "add") => Ok(Edit::TrailingSlash(TrailingSlash::Add)),
                ("trailing-slash", "keep") => Ok(Edit::TrailingSlash(TrailingSlash::Keep)),
                ("sort-query", "key") => Ok(Edit::Sort(SortQuery::Key)),
                ("sort-query", "key-value") => Ok(Edit::Sort(SortQuery::KeyValue)),
                ("sort-query", "off") => Ok(Edit::Sort(SortQuery::Off)),
                ("trailing-slash", _) => Err(format!(
                    "trailing-slash={value}: expected remove, add or keep"
                )),
                ("sort-query", _) => Err(format!(
                    "sort-query={value}: expected key, key-value or off"
                )),
                _ => Err(format!(
                    "'{s}': only trailing-slash= and sort-query= take a value"
                )),
            };
        }
        match s.as_bytes().first() {
            Some(b'+') => Ok(Edit::On(rule(&s[1..])?)),
            Some(b'-') => Ok(Edit::Off(rule(&s[1..])?)),
            _ => Ok(Edit::On(rule(s)?)),
        }
    }

    fn apply(&self, c: &mut Config) {
        match *self {
            Edit::On(r) => c.enabled.insert(r),
            Edit::Off(r) => c.enabled.remove(r),
            Edit::TrailingSlash(p) => {
                c.trailing_slash = p;
                c.enabled.insert(Rule::TrailingSlash);
            }
            Edit::Sort(SortQuery::Off) => {
                c.sort = SortQuery::Off;
                c.enabled.remove(Rule::SortQuery);
            }
            Edit::Sort(s) => {
                c.sort = s;
                c.enabled.insert(Rule::SortQuery);
            }
        }
    }
}

/// The rules of a run: a configuration for every host, resolved up front.
#[derive(Clone, Debug)]
pub struct RuleSet {
    global: Arc<Config>,
    /// Exact host → index in `hosts`.
    exact: HashMap<Vec<u8>, usize>,
    /// `*.suffix` → index in `hosts` (keyed by `suffix`).
    wildcard: HashMap<Vec<u8>, usize>,
    hosts: Vec<Arc<Config>>,
}

impl RuleSet {
    /// The rules of a tier mask with the default lists, edited by `edits`.
    pub fn new(mask: RuleMask, edits: &[Edit]) -> RuleSet {
        let mut c = Config::for_mask(mask);
        for e in edits {
            e.apply(&mut c);
        }
        RuleSet::from_global(c)
    }

    /// A rule set of one configuration for every host.
    pub fn from_global(mut global: Config) -> RuleSet {
        global.finish();
        RuleSet {
            global: Arc::new(global),
            exact: HashMap::new(),
            wildcard: HashMap::new(),
            hosts: Vec::new(),
        }
    }

    /// The configuration for every host that no host section names.
    pub fn global(&self) -> &Config {
        &self.global
    }

    /// The rules that may run on some host: the global mask and every host's.
    pub fn any_enabled(&self) -> RuleMask {
        let mut m = self.global.enabled;
        for h in &self.hosts {
            m.0 |= h.enabled.0;
        }
        m
    }

    /// How many rewrite rules there are in all: one past the highest scratch
    /// slot (a host section shares the top level's rules and slots).
    pub fn rewrite_count(&self) -> usize {
        std::iter::once(&self.global)
            .chain(&self.hosts)
            .flat_map(|c| c.rewrites.iter().map(|r| r.slot + 1))
            .max()
            .unwrap_or(0)
    }

    /// The configuration for `host` (lower-case, as canonical URLs have it;
    /// a trailing dot is ignored). An exact host section wins over a
    /// wildcard; of wildcards, the longest suffix wins.
    #[inline]
    pub fn for_host(&self, host: Option<&[u8]>) -> &Config {
        if self.hosts.is_empty() {
            return &self.global;
        }
        match host {
            Some(h) => self.lookup(h.strip_suffix(b".").unwrap_or(h)),
            None => &self.global,
        }
    }

    fn lookup(&self, host: &[u8]) -> &Config {
        if let Some(&i) = self.exact.get(host) {
            return &self.hosts[i];
        }
        // `*.example.com` matches `a.example.com` and `b.a.example.com`:
        // try each proper suffix after a dot, longest first.
        let mut rest = host;
        while let Some(dot) = memchr::memchr(b'.', rest) {
            rest = &rest[dot + 1..];
            if let Some(&i) = self.wildcard.get(rest) {
                return &self.hosts[i];
            }
        }
        &self.global
    }

    pub(crate) fn add_host(&mut self, patterns: &[String], config: Config) -> Result<(), String> {
        let i = self.hosts.len();
        self.hosts.push(Arc::new(config));
        for p in patterns {
            let p = p.trim().to_ascii_lowercase();
            let p = p.strip_suffix('.').unwrap_or(&p);
            let (map, key) = match p.strip_prefix("*.") {
                Some(suffix) => (&mut self.wildcard, suffix),
                None => (&mut self.exact, p),
            };
            if key.is_empty() || key.contains('*') {
                return Err(format!(
                    "host pattern '{p}': expected a host or '*.' followed by a host"
                ));
            }
            if map.insert(key.as_bytes().to_vec(), i).is_some() {
                return Err(format!("host pattern '{p}' is in two host sections"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for r in Rule::ALL {
            assert_eq!(Rule::from_name(r.name()), Some(r));
            assert_eq!(Rule::ALL[r as usize], r);
        }
        let mut names: Vec<_> = Rule::ALL.iter().map(|r| r.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Rule::ALL.len());
    }

    #[test]
    fn tiers_nest() {
        let safe = RuleMask::up_to(Tier::Safe);
        let aggressive = RuleMask::up_to(Tier::Aggressive);
        assert!(safe.has(Rule::Fragment) && safe.has(Rule::Tracking) && !safe.has(Rule::Www));
        assert!(aggressive.has(Rule::Www) && aggressive.has(Rule::Fragment));
        assert!(!aggressive.has(Rule::LowercasePath) && !aggressive.has(Rule::HttpsAsHttp));
        assert_eq!(safe.0 & !aggressive.0, 0);
    }

    #[test]
    fn edits_parse() {
        assert_eq!(
            Edit::parse_list("+fragment, -www,lowercase-path,trailing-slash=add,sort-query=off")
                .unwrap(),
            vec![
                Edit::On(Rule::Fragment),
                Edit::Off(Rule::Www),
                Edit::On(Rule::LowercasePath),
                Edit::TrailingSlash(TrailingSlash::Add),
                Edit::Sort(SortQuery::Off),
            ]
        );
        assert!(Edit::parse("+nope")
            .unwrap_err()
            .contains("unknown rule 'nope'"));
        assert!(Edit::parse("trailing-slash=up").is_err());
        assert!(Edit::parse("www=1").is_err());
    }

    #[test]
    fn host_lookup_prefers_exact_then_longest_wildcard() {
        let mut set = RuleSet::new(RuleMask::up_to(Tier::Safe), &[]);
        let mut a = Config::for_mask(RuleMask::NONE);
        a.enabled.insert(Rule::Www);
        let mut b = Config::for_mask(RuleMask::NONE);
        b.enabled.insert(Rule::LowercasePath);
        let mut c = Config::for_mask(RuleMask::NONE);
        c.enabled.insert(Rule::HttpsAsHttp);
        set.add_host(&["*.example.com".into()], a).unwrap();
        set.add_host(&["*.shop.example.com".into()], b).unwrap();
        set.add_host(&["Example.com.".into()], c).unwrap();
        let on = |h: &str| set.for_host(Some(h.as_bytes())).enabled;
        assert!(on("example.com").has(Rule::HttpsAsHttp));
        assert!(on("example.com.").has(Rule::HttpsAsHttp));
        assert!(on("www.example.com").has(Rule::Www));
        assert!(on("a.shop.example.com").has(Rule::LowercasePath));
        assert!(on("shop.example.com").has(Rule::Www));
        assert!(on("other.org").has(Rule::Fragment));
        assert!(on("notexample.com").has(Rule::Fragment));
        assert!(set
            .add_host(&["example.com".into()], Config::for_mask(RuleMask::NONE))
            .is_err());
    }
}
