//! Dedup rules: the rewrites past RFC 3986 that make URLs serving the same
//! page collapse to one key, each named, documented, and switchable.
//!
//! A rule runs on a URL that is already canonical (`rfc3986`): components
//! are in their serialized form, unreserved escapes decoded, hex upper-cased.
//! So a rule compares bytes, never decodes, and never has to guess a
//! component's boundaries. The rules edit the URL where it is, from its last
//! component to its first, and a URL no rule changes is not copied
//! (`apply.rs`); each component's rules have a file of their own
//! (`host.rs`, `path.rs`, `query.rs`).
//!
//! No rule decodes a reserved escape (`%2F`, `%26`, `%3D`, `%2B`, `%3F`,
//! `%23`): `%2B` in a query is a literal plus, `+` is a space, and only the
//! `query-space` rule writes both spaces the same way (`%20`).
//!
//! Which rules run is a [`RuleMask`]. A profile gives the starting mask (its
//! tier), `--rule +name,-name` and a rules file ([`file`](mod@file)) edit it, and a
//! rules file can give each host (exact or `*.example.com`) its own mask and
//! lists, and each path prefix of a host its own parameter lists (path
//! sections). Everything per host and path is resolved when the
//! [`RuleSet`] is built, so a URL costs one host lookup (none without host
//! sections), and a comparison per path prefix only when its host has
//! path sections. Host aliases (`host-aliases`) rewrite a host before its
//! section is looked up: one hash lookup per URL when there are any.

pub(crate) mod apply;
pub mod file;
pub(crate) mod fused;
pub(crate) mod glob;
mod host;
mod path;
mod psl;
mod query;
pub(crate) mod rewrite;

use std::fmt;
use std::sync::Arc;

use hashbrown::HashMap;

use glob::Glob;
use rewrite::Rewrite;

/// Defines the rules, once each: the [`Rule`] enum (with a doc test per rule
/// that runs its example), [`Rule::ALL`], and the table that names, tiers,
/// documentation, `--list-rules`, the table in docs/rules.md and the name parser all
/// read. A new rule is one entry here, plus its code in the component file
/// it acts on (`host.rs`, `path.rs`, `query.rs`, or `apply.rs` for scheme,
/// userinfo and fragment).
macro_rules! rules {
    ($(
        $variant:ident {
            name: $name:literal,
            tier: $tier:ident,
            effect: $effect:literal,
            setting: $setting:expr,
            config: $config:literal,
            example: $before:literal => $after:literal,
        }
    )*) => {
        /// One dedup rule. The order is the order of [`Rule::ALL`], used for
        /// bits, reports and documentation.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Rule {
            $(
                #[doc = concat!("`", $name, "`: ", $effect, ".")]
                #[doc = ""]
                #[doc = concat!("`", $before, "` → `", $after, "`")]
                #[doc = ""]
                #[doc = "```"]
                #[doc = "use std::sync::Arc;"]
                #[doc = "use canonurl::canon::rules::{file, Rule, RuleMask};"]
                #[doc = "use canonurl::{Canonicalizer, Profile};"]
                #[doc = ""]
                #[doc = concat!("let only = RuleMask::of(&[Rule::", stringify!($variant), "]);")]
                #[doc = concat!("let set = file::build(only, Some(r#\"", $config, "\"#), &[]).unwrap();")]
                #[doc = "let mut c = Canonicalizer::new(Profile::Rfc3986).with_rules(Arc::new(set));"]
                #[doc = "let mut out = Vec::new();"]
                #[doc = concat!("let r = c.canonicalize_into(b\"", $before, "\", &mut out).unwrap();")]
                #[doc = concat!("assert_eq!(String::from_utf8(out).unwrap(), \"", $after, "\");")]
                #[doc = concat!("assert!(r.fired.has(Rule::", stringify!($variant), "));")]
                #[doc = "```"]
                $variant,
            )*
        }

        /// Every rule's definition, in [`Rule::ALL`] order.
        const DEFINITIONS: &[Definition] = &[$(
            Definition {
                name: $name,
                tier: Tier::$tier,
                effect: $effect,
                setting: $setting,
                config: $config,
                example: ($before, $after),
            },
        )*];

        impl Rule {
            /// Every rule, in bit and report order.
            pub const ALL: [Rule; DEFINITIONS.len()] = [$(Rule::$variant),*];
        }
    };
}

/// What the rule table says of one rule.
#[derive(Clone, Copy, Debug)]
pub struct Definition {
    /// The name on the command line, in rules files and reports.
    pub name: &'static str,
    /// Which profiles run it by default.
    pub tier: Tier,
    /// One line on what it does.
    pub effect: &'static str,
    /// Its setting and the choices, for a rule that takes one
    /// (`trailing-slash=add`).
    pub setting: Option<&'static str>,
    /// The rules file its example needs (TOML; empty for none).
    pub config: &'static str,
    /// An input and what the rule alone makes of it (on top of `rfc3986`).
    pub example: (&'static str, &'static str),
}

rules! {
    Fragment {
        name: "fragment",
        tier: Safe,
        effect: "remove the fragment (#...): browsers never send it to the server",
        setting: None,
        config: "",
        example: "http://example.com/a#top" => "http://example.com/a",
    }
    EmptyQuery {
        name: "empty-query",
        tier: Safe,
        effect: "remove an empty query '?', stray '&', and pairs with an empty name (=1) or value (id=)",
        setting: None,
        config: "",
        example: "http://example.com/a?&id=&b=2&" => "http://example.com/a?b=2",
    }
    IndexFile {
        name: "index-file",
        tier: Aggressive,
        effect: "remove a directory index file name (index.html, default.aspx, ...), keeping the '/'",
        setting: None,
        config: "",
        example: "http://example.com/test/index.html" => "http://example.com/test/",
    }
    Www {
        name: "www",
        tier: Aggressive,
        effect: "remove www. and wwwN. while what remains is a registrable domain (Public Suffix List)",
        setting: None,
        config: "",
        example: "http://www.example.co.uk/" => "http://example.co.uk/",
    }
    SortQuery {
        name: "sort-query",
        tier: Aggressive,
        effect: "sort query parameters: stable by key (repeated keys keep their order), or by key then value",
        setting: Some("key (key-value, off)"),
        config: "",
        example: "http://example.com/?b=2&a=1&a=0" => "http://example.com/?a=1&a=0&b=2",
    }
    Tracking {
        name: "tracking",
        tier: Safe,
        effect: "remove tracking parameters (utm_*, gclid, fbclid, ...; globs, any case)",
        setting: None,
        config: "",
        example: "http://example.com/a?utm_source=x&id=1" => "http://example.com/a?id=1",
    }
    Session {
        name: "session",
        tier: Safe,
        effect: "remove session ids (jsessionid, PHPSESSID, ;jsessionid=, /(S(...))/) and state parameters",
        setting: None,
        config: "",
        example: "http://example.com/a;jsessionid=0A1B?PHPSESSID=x&id=1" => "http://example.com/a?id=1",
    }
    DuplicateSlashes {
        name: "duplicate-slashes",
        tier: Aggressive,
        effect: "collapse '//' in the path to '/', except after an embedded 'scheme:' (/web/https://...)",
        setting: None,
        config: "",
        example: "http://example.com/a//b" => "http://example.com/a/b",
    }
    TrailingSlash {
        name: "trailing-slash",
        tier: Aggressive,
        effect: "one spelling for the last path segment: add '/' when it has no dot, or remove it, or keep",
        setting: Some("add (remove, keep)"),
        config: "",
        example: "http://www.cnblogs.com/shuchao" => "http://www.cnblogs.com/shuchao/",
    }
    QuerySpace {
        name: "query-space",
        tier: Aggressive,
        effect: "write '+' in the query as '%20' (both are a space in form data); '%2B' stays a plus",
        setting: None,
        config: "",
        example: "http://example.com/?q=a+b" => "http://example.com/?q=a%20b",
    }
    LowercasePath {
        name: "lowercase-path",
        tier: OptIn,
        effect: "lower-case the path (case-insensitive servers such as IIS); escapes keep upper-case hex",
        setting: None,
        config: "",
        example: "http://example.com/Docs/A%C3%A9.HTML" => "http://example.com/docs/a%C3%A9.html",
    }
    HttpsAsHttp {
        name: "https-as-http",
        tier: OptIn,
        effect: "treat http and https as one scheme, written http (https://h:80/ is http://h/); switching it on switches http-as-https off",
        setting: None,
        config: "",
        example: "https://example.com/a" => "http://example.com/a",
    }
    Userinfo {
        name: "userinfo",
        tier: Safe,
        effect: "remove user:password@",
        setting: None,
        config: "",
        example: "http://user:pw@example.com/" => "http://example.com/",
    }
    DefaultParams {
        name: "default-params",
        tier: Safe,
        effect: "remove parameters that carry their default value, as a rules file lists them",
        setting: None,
        config: "defaults = { sort = \"asc\" }",
        example: "http://example.com/list?sort=asc&page=2" => "http://example.com/list?page=2",
    }
    Ipv4Mapped {
        name: "ipv4-mapped",
        tier: Aggressive,
        effect: "write IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96) hosts as IPv4",
        setting: None,
        config: "",
        example: "http://[::ffff:192.0.2.1]/" => "http://192.0.2.1/",
    }
    HostTrailingDot {
        name: "host-trailing-dot",
        tier: Safe,
        effect: "remove a trailing dot from the host",
        setting: None,
        config: "",
        example: "http://example.com./a" => "http://example.com/a",
    }
    Rewrite {
        name: "rewrite",
        tier: Safe,
        effect: "the rules file's rewrites (literal or regex, per host), after the other rules, before trailing-slash=add's slash",
        setting: None,
        config: "rewrite = [{ regex = '^/story\\?id=(\\d+)$', replace = '/story_$1' }]",
        example: "http://example.com/story?id=12" => "http://example.com/story_12",
    }
    KeepParams {
        name: "keep-params",
        tier: Safe,
        effect: "keep only the parameters a rules file allows (keep-params globs, per host and path prefix)",
        setting: None,
        config: "keep-params = [\"id\", \"p*\"]",
        example: "http://example.com/a?id=1&ref=x&page=2" => "http://example.com/a?id=1&page=2",
    }
    DropParams {
        name: "drop-params",
        tier: Safe,
        effect: "remove the parameters a rules file denies (drop-params globs, per host and path prefix)",
        setting: None,
        config: "drop-params = [\"view\", \"lang*\"]",
        example: "http://example.com/a?id=1&view=grid&language=en" => "http://example.com/a?id=1",
    }
    HostAlias {
        name: "host-alias",
        tier: Safe,
        effect: "write a host (and path prefix) a rules file aliases as its target (host-aliases), before host sections are chosen",
        setting: None,
        config: "host-aliases = [[\"shuchao.cnblogs.com/\", \"www.cnblogs.com/shuchao/\"]]",
        example: "http://shuchao.cnblogs.com/x" => "http://www.cnblogs.com/shuchao/x",
    }
    HttpAsHttps {
        name: "http-as-https",
        tier: OptIn,
        effect: "treat http and https as one scheme, written https (http://h:443/ is https://h/); switching it on switches https-as-http off",
        setting: None,
        config: "",
        example: "http://example.com/a" => "https://example.com/a",
    }
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
    /// The rule's definition in the rule table.
    pub fn definition(self) -> &'static Definition {
        &DEFINITIONS[self as usize]
    }

    /// The rule's name on the command line, in rules files and reports.
    pub fn name(self) -> &'static str {
        self.definition().name
    }

    /// The rule's tier.
    pub fn tier(self) -> Tier {
        self.definition().tier
    }

    /// One line on what the rule does, for `--list-rules`.
    pub fn effect(self) -> &'static str {
        self.definition().effect
    }

    /// The rule named `name`.
    pub fn from_name(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The rule's row of the rule table in docs/rules.md (Markdown): number, name,
    /// tier, effect, setting and example.
    pub fn markdown_row(self) -> String {
        let d = self.definition();
        format!(
            "| {} | `{}` | {} | {} | {} | `{}` → `{}` |",
            self as usize + 1,
            d.name,
            d.tier.name(),
            d.effect,
            d.setting.map_or("", |s| s),
            d.example.0,
            d.example.1
        )
    }

    /// The rule table of docs/rules.md (Markdown): a header and one
    /// [`markdown_row`](Rule::markdown_row) per rule, in table order.
    pub fn markdown_table() -> String {
        let mut t = String::from(
            "| # | rule | tier | what it does | setting (default first) | example, the rule alone on `rfc3986` |\n\
             |---|---|---|---|---|---|\n",
        );
        for r in Rule::ALL {
            t.push_str(&r.markdown_row());
            t.push('\n');
        }
        t
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

    /// The set of `rules`.
    pub fn of(rules: &[Rule]) -> RuleMask {
        let mut m = RuleMask::NONE;
        for &r in rules {
            m.insert(r);
        }
        m
    }

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

    /// The indices (`rule as usize`) of the rules in the set, lowest
    /// first, one step a rule in it: where [`iter`](Self::iter) tests each
    /// of [`Rule::ALL`] (about 90 instructions a URL when the pipeline
    /// counts the rules that fired, pipeline/plain-aggressive).
    #[inline]
    #[cfg_attr(not(feature = "pipeline"), allow(dead_code))]
    pub(crate) fn indices(self) -> impl Iterator<Item = usize> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            let at = bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
            (at < 32).then_some(at)
        })
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
    Remove,
    /// `/a/b` becomes `/a/b/`, only when the last segment has no `.` (a
    /// segment with a dot is usually a file: `/a/b.html` stays). The
    /// default: the canonical form the project follows writes a directory
    /// with its slash (`http://www.cnblogs.com/shuchao/`).
    #[default]
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
pub(crate) struct SessionParam {
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
pub(crate) const DEFAULT_INDEX_FILES: &[&str] = &[
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
pub(crate) const DEFAULT_TRACKING: &[&str] = &[
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
pub(crate) const DEFAULT_SESSION: &[&str] = &[
    "jsessionid",
    "phpsessid",
    "aspsessionid*",
    "cfid",
    "cftoken",
    "sid=hex32",
];

/// Everything one host's URLs are canonicalized with.
#[derive(Clone, Debug)]
pub(crate) struct Config {
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
    /// `keep-params`: the only parameters kept (name globs); `None` keeps
    /// every parameter the other rules keep.
    pub keep_params: Option<Vec<Glob>>,
    /// `drop-params`: parameters removed (name globs).
    pub drop_params: Vec<Glob>,
    /// Path sections: the parameter settings of URLs whose path starts
    /// with a prefix, longest prefix first (see [`for_path`](Self::for_path)).
    pub paths: Vec<PathSection>,
    /// The parameter lists (tracking, session, state, defaults) by the
    /// lower-cased first byte of the names they can match: entries
    /// `param_first[b]..param_first[b + 1]` of `param_entries`, so that a
    /// parameter is compared with the one or two names that start like it
    /// rather than with every list.
    /// Inline, not behind a pointer: the query pass reads it at a fixed
    /// offset from the configuration, with no bounds to check, instead of
    /// loading (and keeping) a pointer and a length for every query.
    param_first: [u32; 257],
    /// The lengths of the names that the entries of `param_first[b]` can
    /// match, by the same first byte (`glob::length_bit`'s bits): a name
    /// whose length none has is compared with none of them. Inline, as
    /// `param_first` is.
    param_lens: [u64; 256],
    /// The second bytes of the names that the entries of `param_first[b]`
    /// can match, by the same first byte: bit `c & 63` for each lower-cased
    /// second byte `c` (all bits for a `*` or `?` there). Most names that
    /// start like an entry and are as long as one differ from it in their
    /// second byte (`docid` and `dclid`): told here, inline, not by the
    /// list's comparison out of line. Inline, as `param_first` is.
    param_second: [u64; 256],
    param_entries: Vec<ParamEntry>,
    /// Patterns that start with `*` or `?`: tried for every name.
    param_wild: Vec<ParamEntry>,
    /// First bytes (both cases) of the index file names, and their shortest
    /// and longest length: most last segments are no index file and are
    /// told so by these.
    index_first: [bool; 256],
    index_len: (usize, usize),
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
            keep_params: None,
            drop_params: Vec::new(),
            paths: Vec::new(),
            param_first: [0; 257],
            param_lens: [0; 256],
            param_second: [0; 256],
            param_entries: Vec::new(),
            param_wild: Vec::new(),
            index_first: [false; 256],
            index_len: (0, 0),
        };
        c.finish();
        c
    }

    /// Recomputes what is derived from the lists.
    fn finish(&mut self) {
        // (first byte, entry), sorted by first byte and then by the rule's
        // precedence (tracking, then session, then defaults).
        let mut keyed: Vec<(u8, ParamEntry)> = Vec::new();
        let mut wild = Vec::new();
        let mut lens = [0u64; 256];
        let mut second = [0u64; 256];
        let mut add = |first: Option<u8>, lengths: u64, seconds: u64, entry: ParamEntry| match first
        {
            Some(b) => {
                let b = b.to_ascii_lowercase();
                lens[b as usize] |= lengths;
                second[b as usize] |= seconds;
                keyed.push((b, entry));
            }
            None => wild.push(entry),
        };
        let mut add_glob = |g: &Glob, entry| {
            add(g.first_literal(), g.length_mask(), g.second_mask(), entry);
        };
        for (i, g) in self.tracking.iter().enumerate() {
            add_glob(g, ParamEntry::Tracking(i));
        }
        for (i, p) in self.session.iter().enumerate() {
            add_glob(&p.name, ParamEntry::Session(i));
        }
        for (i, g) in self.state.iter().enumerate() {
            add_glob(g, ParamEntry::State(i));
        }
        for (i, g) in self.drop_params.iter().enumerate() {
            add_glob(g, ParamEntry::Drop(i));
        }
        for (i, (name, _)) in self.defaults.iter().enumerate() {
            let lengths = glob::length_bit(name.len());
            let seconds = name.get(1).map_or(0, |&c| glob::second_bit(c));
            add(
                name.first().copied(),
                lengths,
                seconds,
                ParamEntry::Default(i),
            );
        }
        self.param_lens = lens;
        self.param_second = second;
        keyed.sort_by_key(|&(b, e)| (b, e.rule()));
        let mut first = [0u32; 257];
        for &(b, _) in &keyed {
            first[b as usize + 1] += 1;
        }
        for b in 0..256 {
            first[b + 1] += first[b];
        }
        self.param_first = first;
        self.param_entries = keyed.into_iter().map(|(_, e)| e).collect();
        self.param_wild = wild;
        self.index_first = [false; 256];
        self.index_len = (usize::MAX, 0);
        for f in &self.index_files {
            if let Some(&b) = f.first() {
                self.index_first[b.to_ascii_lowercase() as usize] = true;
                self.index_first[b.to_ascii_uppercase() as usize] = true;
            }
            self.index_len = (self.index_len.0.min(f.len()), self.index_len.1.max(f.len()));
        }
    }

    /// Whether `segment` is one of the index file names (ASCII
    /// case-insensitive).
    ///
    /// Inlined, most last segments are told by the first byte and the
    /// length; the list is compared out of line.
    #[inline(always)]
    pub(crate) fn is_index_file(&self, segment: &[u8]) -> bool {
        let Some(&first) = segment.first() else {
            return false;
        };
        if !self.index_first[first as usize]
            || segment.len() < self.index_len.0
            || segment.len() > self.index_len.1
        {
            return false;
        }
        self.in_index_files(segment)
    }

    /// [`is_index_file`](Self::is_index_file)'s comparison with the list,
    /// a word at a time (see `ascii::eq_lower_ignore_case`). Out of line:
    /// inlined into the fused rules, the bigger comparison made every URL
    /// dearer (kasztp `aggressive` 734.4 → 749.2, `benches/guard.sh`).
    #[inline(never)]
    fn in_index_files(&self, segment: &[u8]) -> bool {
        self.index_files
            .iter()
            .any(|f| crate::ascii::eq_lower_ignore_case(segment, f))
    }

    /// The configuration for the canonical `path` (after the path rules):
    /// the path section of the longest prefix that matches, or `self`. A
    /// prefix that ends in `/` also matches the path without it (`/shop/`
    /// matches `/shop`), so that `trailing-slash` (which may add or remove
    /// that slash after the sections are chosen) cannot move a URL from one
    /// section to another between two runs.
    #[inline]
    pub fn for_path(&self, path: &[u8]) -> &Config {
        if self.paths.is_empty() {
            return self;
        }
        self.paths
            .iter()
            .find(|p| p.matches(path))
            .map_or(self, |p| &p.config)
    }

    /// Why the query rules should drop a parameter, if they should.
    #[inline]
    pub(crate) fn drop_param(&self, name: &[u8], value: &[u8]) -> Option<Rule> {
        let listed = match name.first() {
            Some(&b) => {
                // Compared only with the entries that start like it and
                // can be as long (`param_lens`), and the wild ones.
                let first = b.to_ascii_lowercase() as usize;
                let unlike = match name.get(1) {
                    Some(&c) => self.param_second[first] & glob::second_bit(c) == 0,
                    None => false,
                };
                if (self.param_lens[first] & glob::length_bit(name.len()) == 0 || unlike)
                    && self.param_wild.is_empty()
                {
                    None
                } else {
                    let (a, b) = (self.param_first[first], self.param_first[first + 1]);
                    self.drop_param_slow(a, b, name, value)
                }
            }
            None => None,
        };
        // The allow-list is the last word: a parameter another rule
        // removes is reported under that rule.
        if listed.is_none() && self.keep_params.is_some() {
            return self.drop_unkept(name);
        }
        listed
    }

    /// `keep-params` on a parameter no other rule removes: out of line,
    /// like [`drop_param_slow`](Self::drop_param_slow), so that the query
    /// pass does not load the allow-list and the enabled rules for every
    /// query (most rule sets have no allow-list).
    #[inline(never)]
    fn drop_unkept(&self, name: &[u8]) -> Option<Rule> {
        match &self.keep_params {
            Some(keep) if self.enabled.has(Rule::KeepParams) => {
                (!keep.iter().any(|g| g.matches(name))).then_some(Rule::KeepParams)
            }
            _ => None,
        }
    }

    /// [`drop_param`](Self::drop_param)'s comparison with the entries
    /// `a..b` of `param_entries` and the wild ones. Out of line: inlined
    /// into the query pass, what it reads of the lists was loaded once per
    /// query, before its first parameter, whether or not any parameter
    /// came here.
    #[inline(never)]
    fn drop_param_slow(&self, a: u32, b: u32, name: &[u8], value: &[u8]) -> Option<Rule> {
        let same_first = &self.param_entries[a as usize..b as usize];
        let on = self.enabled;
        let matches = |e: &ParamEntry| {
            on.has(e.rule())
                && match *e {
                    ParamEntry::Tracking(i) => self.tracking[i].matches(name),
                    ParamEntry::Session(i) => self.session[i].matches(name, value),
                    ParamEntry::State(i) => self.state[i].matches(name),
                    ParamEntry::Default(i) => {
                        let (n, v) = &self.defaults[i];
                        n.as_slice() == name && v.as_slice() == value
                    }
                    ParamEntry::Drop(i) => self.drop_params[i].matches(name),
                }
        };
        // `same_first` is in precedence order: its first match is its best.
        let found = same_first.iter().find(|e| matches(e)).map(|e| e.rule());
        let wild = self
            .param_wild
            .iter()
            .filter(|e| matches(e))
            .map(|e| e.rule())
            .min();
        match (found, wild) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The parameter settings of the URLs of one host section (or of the top
/// level) whose path starts with `prefix`.
#[derive(Clone, Debug)]
pub(crate) struct PathSection {
    /// Canonical path bytes; starts with `/`.
    pub prefix: Vec<u8>,
    /// The host's configuration with the section's settings on top.
    pub config: Arc<Config>,
}

impl PathSection {
    /// Whether the section is for `path`: `path` starts with the prefix, or
    /// is the prefix without its final `/`.
    #[inline]
    pub fn matches(&self, path: &[u8]) -> bool {
        path.starts_with(&self.prefix)
            || (self.prefix.len() > 1
                && self.prefix.last() == Some(&b'/')
                && path == &self.prefix[..self.prefix.len() - 1])
    }
}

/// One name of a parameter list (an index into it).
#[derive(Clone, Copy, Debug)]
enum ParamEntry {
    Tracking(usize),
    Session(usize),
    State(usize),
    Default(usize),
    Drop(usize),
}

impl ParamEntry {
    /// The rule that removes a parameter this entry matches.
    fn rule(self) -> Rule {
        match self {
            ParamEntry::Tracking(_) => Rule::Tracking,
            ParamEntry::Session(_) | ParamEntry::State(_) => Rule::Session,
            ParamEntry::Default(_) => Rule::DefaultParams,
            ParamEntry::Drop(_) => Rule::DropParams,
        }
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
                match file::hint(name, names.iter().copied()) {
                    // `+fragmnt`: the slip's fix alone, not 20 names.
                    h if !h.is_empty() => format!("unknown rule '{name}'{h}"),
                    _ => format!("unknown rule '{name}' (rules: {})", names.join(", ")),
                }
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
            // The two ways to fold the schemes exclude each other: the
            // last one switched on wins.
            Edit::On(Rule::HttpsAsHttp) => {
                c.enabled.remove(Rule::HttpAsHttps);
                c.enabled.insert(Rule::HttpsAsHttp);
            }
            Edit::On(Rule::HttpAsHttps) => {
                c.enabled.remove(Rule::HttpsAsHttp);
                c.enabled.insert(Rule::HttpAsHttps);
            }
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
/// Built from a mask and `--rule` edits ([`RuleSet::new`]) or from a rules
/// file ([`file::build`]); a [`Canonicalizer`](crate::Canonicalizer) runs
/// it ([`with_rules`](crate::Canonicalizer::with_rules)).
///
/// ```
/// use std::sync::Arc;
/// use canonurl::canon::rules::{Edit, Rule, RuleMask, RuleSet};
/// use canonurl::{Canonicalizer, Profile};
///
/// // The safe tier, without removing the fragment, with sorted queries.
/// let edits = Edit::parse_list("-fragment,+sort-query").unwrap();
/// let rules = RuleSet::new(Profile::Safe.rule_mask(), &edits);
/// assert!(rules.any_enabled().has(Rule::SortQuery));
/// assert!(!rules.any_enabled().has(Rule::Fragment));
/// let mut c = Canonicalizer::new(Profile::Safe).with_rules(Arc::new(rules));
/// let mut out = Vec::new();
/// let r = c.canonicalize_into(b"http://a.example/?b=1&a=2#top", &mut out).unwrap();
/// assert_eq!(out, b"http://a.example/?a=2&b=1#top");
/// assert_eq!(r.fired, RuleMask::of(&[Rule::SortQuery]));
/// ```
#[derive(Clone, Debug)]
pub struct RuleSet {
    global: Arc<Config>,
    /// Exact host → index in `hosts`.
    exact: HashMap<Vec<u8>, usize>,
    /// `*.suffix` → index in `hosts` (keyed by `suffix`).
    wildcard: HashMap<Vec<u8>, usize>,
    hosts: Vec<Arc<Config>>,
    /// `host-aliases`: source host → its aliases, longest path prefix
    /// first.
    aliases: HashMap<Vec<u8>, Vec<Alias>>,
    /// Each rewrite's `id`, by scratch slot (for `--explain`).
    rewrite_ids: Vec<Option<Box<str>>>,
}

/// A host alias: URLs of host `from` (the map's key) whose path starts
/// with `from_prefix` are written with host `to_host` and `to_prefix` in
/// place of `from_prefix`. Both prefixes start with `/` (a bare host's is
/// `/`, which every path of an `http` URL starts with).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Alias {
    /// Canonical path bytes the alias replaces.
    pub from_prefix: Vec<u8>,
    /// The host written instead (canonical).
    pub to_host: Vec<u8>,
    /// The path prefix written instead (canonical).
    pub to_prefix: Vec<u8>,
}

impl Alias {
    /// How many bytes at the start of `path` the alias replaces, when it
    /// applies: its prefix, or the whole path when that is the prefix
    /// without its final `/` (`/shop` for `/shop/`: otherwise
    /// `trailing-slash=add` would make an alias apply on a second run).
    #[inline]
    pub fn matched(&self, path: &[u8]) -> Option<usize> {
        let p = &self.from_prefix;
        if path.starts_with(p) {
            Some(p.len())
        } else if p.len() > 1 && p.last() == Some(&b'/') && path == &p[..p.len() - 1] {
            Some(path.len())
        } else {
            None
        }
    }
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
    pub(crate) fn from_global(mut global: Config) -> RuleSet {
        global.finish();
        RuleSet {
            global: Arc::new(global),
            exact: HashMap::new(),
            wildcard: HashMap::new(),
            hosts: Vec::new(),
            aliases: HashMap::new(),
            rewrite_ids: Vec::new(),
        }
    }

    /// Whether the set has host aliases.
    #[inline]
    pub(crate) fn has_aliases(&self) -> bool {
        !self.aliases.is_empty()
    }

    /// Whether the set has host sections.
    #[inline]
    pub(crate) fn has_hosts(&self) -> bool {
        !self.hosts.is_empty()
    }

    /// The alias for a URL of `host` (a trailing dot is ignored) with
    /// `path`, and how many bytes of the path it replaces.
    #[inline]
    pub(crate) fn alias(&self, host: &[u8], path: &[u8]) -> Option<(&Alias, usize)> {
        let list = self.aliases.get(host.strip_suffix(b".").unwrap_or(host))?;
        list.iter().find_map(|a| a.matched(path).map(|n| (a, n)))
    }

    /// The `id` of the rewrite rule in scratch slot `slot`, if it has one.
    pub fn rewrite_id(&self, slot: usize) -> Option<&str> {
        self.rewrite_ids.get(slot)?.as_deref()
    }

    pub(crate) fn set_rewrite_ids(&mut self, ids: Vec<Option<Box<str>>>) {
        self.rewrite_ids = ids;
    }

    /// Adds the alias of `from` (host), keeping each host's aliases longest
    /// prefix first. An error for a second alias of the same host and
    /// prefix.
    pub(crate) fn add_alias(&mut self, from: Vec<u8>, alias: Alias) -> Result<(), String> {
        let list = self.aliases.entry(from).or_default();
        if list.iter().any(|a| a.from_prefix == alias.from_prefix) {
            return Err("a second alias for the same host and path prefix".into());
        }
        list.push(alias);
        list.sort_by_key(|a| std::cmp::Reverse(a.from_prefix.len()));
        Ok(())
    }

    /// The configuration for every host that no host section names.
    pub(crate) fn global(&self) -> &Config {
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
    #[cfg(test)]
    pub(crate) fn rewrite_count(&self) -> usize {
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
    pub(crate) fn for_host(&self, host: Option<&[u8]>) -> &Config {
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

    /// `drop_param`'s length and second-byte filters (`param_lens`,
    /// `param_second`) leave out only names
    /// that no entry of their first byte matches: the same answer as
    /// comparing every such entry, for names of every length up to 70
    /// made from each entry's pattern, on the default lists and on a
    /// rules file's globs with `?` and `*`.
    #[test]
    fn length_filter_keeps_every_match() {
        let mut custom = Config::for_mask(RuleMask::up_to(Tier::Aggressive));
        custom.tracking.push(Glob::new("ab?d").unwrap());
        custom.tracking.push(Glob::new("x*y?z").unwrap());
        custom.drop_params.push(Glob::new("ref").unwrap());
        custom.drop_params.push(Glob::new("q").unwrap());
        custom.drop_params.push(Glob::new("k?").unwrap());
        custom.defaults.push((b"sort".to_vec(), b"asc".to_vec()));
        custom.enabled.insert(Rule::DropParams);
        custom.enabled.insert(Rule::DefaultParams);
        custom.finish();
        let defaults = Config::for_mask(RuleMask::up_to(Tier::Aggressive));
        let mut tried = 0;
        for cfg in [&defaults, &custom] {
            let starts: [&[u8]; 18] = [
                b"a", b"ab", b"x", b"r", b"s", b"UTM_", b"j", b"l", b"p", b"S", b"q", b"k", b"d",
                b"dC", b"Do", b"g", b"gc", b"so",
            ];
            for start in starts {
                for len in start.len()..70 {
                    for fill in [b'y', b'd', b'_', b'z'] {
                        let mut name = vec![fill; len];
                        name[..start.len()].copy_from_slice(start);
                        let f = start[0].to_ascii_lowercase() as usize;
                        let (a, b) = (cfg.param_first[f], cfg.param_first[f + 1]);
                        for value in [&b"asc"[..], &[b'a'; 32][..]] {
                            let all = cfg.drop_param_slow(a, b, &name, value);
                            assert_eq!(
                                cfg.drop_param(&name, value),
                                all,
                                "{}",
                                name.escape_ascii()
                            );
                            tried += usize::from(all.is_some());
                        }
                    }
                }
            }
            // Names that an entry matches, as they are.
            for (n, v) in [
                ("utm_source", "x"),
                ("SID", "0123456789abcdef0123456789abcdef"),
            ] {
                assert!(cfg.drop_param(n.as_bytes(), v.as_bytes()).is_some(), "{n}");
            }
        }
        for (n, v) in [
            ("abcd", ""),
            ("xqqyqz", ""),
            ("ref", "1"),
            ("sort", "asc"),
            ("Q", "1"),
            ("kZ", "1"),
        ] {
            assert!(
                custom.drop_param(n.as_bytes(), v.as_bytes()).is_some(),
                "{n}"
            );
        }
        assert!(tried > 0);
    }

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
