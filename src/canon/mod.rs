//! Profiles and the [`Canonicalizer`]: the public entry point that turns the
//! bytes of one URL into its canonical bytes.

use std::str::FromStr;
use std::sync::Arc;

use crate::reject::{Reason, Reject};
use crate::url::fast::{self, Kept};
use crate::url::parser::{self, Mode};
use crate::url::parts::{Parts, ABSENT};
use crate::url::simd::Chunk;

mod key;
pub(crate) mod rfc3986;
pub mod rules;
pub mod surt;

pub use key::{key, KEY_SEED};
use rules::{RuleMask, RuleSet, Tier};

/// How far canonicalization goes.
///
/// ```
/// use canonurl::{Canonicalizer, Profile};
///
/// let url = b"HTTP://www.Example.COM:80/a/./b/%7euser/index.html#top";
/// let run = |profile| {
///     let mut out = Vec::new();
///     Canonicalizer::new(profile).canonicalize_into(url, &mut out).unwrap();
///     String::from_utf8(out).unwrap()
/// };
/// // The URL Standard's href: case, default port and dot segments.
/// assert_eq!(run(Profile::Whatwg), "http://www.example.com/a/b/%7euser/index.html#top");
/// // Meaning-preserving: unreserved escapes decoded too.
/// assert_eq!(run(Profile::Rfc3986), "http://www.example.com/a/b/~user/index.html#top");
/// // Dedup rules: `www.`, the index file and the fragment go.
/// assert_eq!(run(Profile::Aggressive), "http://example.com/a/b/~user/");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Profile {
    /// Exactly the WHATWG URL Standard's href (basic URL parser + serializer).
    #[cfg_attr(
        feature = "cli",
        value(name = "whatwg", help = "Exactly the URL Standard's href")
    )]
    Whatwg,
    /// `Whatwg`, plus RFC 3986 §6.2.2 normalization that keeps the meaning:
    /// percent-escape hex digits upper-cased and escaped unreserved characters
    /// (`ALPHA DIGIT - . _ ~`) decoded, in every component, and an opaque
    /// host (a non-special URL's) lower-cased. The output is a URI by the
    /// grammar of RFC 3986 Appendix A: the characters it excludes and the URL
    /// Standard leaves (`"` `<` `>` `\` `^` `` ` `` `{` `|` `}`, `[` `]`
    /// outside an IP literal, space in an opaque path, a fragment's second
    /// `#`) are percent-encoded, and a `%` that starts no escape is `%25`.
    #[default]
    #[cfg_attr(
        feature = "cli",
        value(
            name = "rfc3986",
            help = "whatwg plus RFC 3986 normalization that keeps the meaning"
        )
    )]
    Rfc3986,
    /// `Rfc3986`, plus the dedup rules that are safe for server-side dedup
    /// in practice (tier [`Tier::Safe`]): fragment, empty query parts,
    /// tracking and session parameters, userinfo, a host's trailing dot,
    /// and the rules file's default values and rewrites.
    #[cfg_attr(
        feature = "cli",
        value(
            name = "safe",
            help = "rfc3986 plus the dedup rules that are safe in practice"
        )
    )]
    Safe,
    /// `Safe`, plus the rules that are right for most sites and wrong for
    /// some (tier [`Tier::Aggressive`]): `www`, index files, query sorting,
    /// duplicate and trailing slashes, `+` as `%20`, IPv4-mapped hosts.
    #[cfg_attr(
        feature = "cli",
        value(
            name = "aggressive",
            help = "safe plus every default dedup rule (see --list-rules)"
        )
    )]
    Aggressive,
}

impl Profile {
    /// The profile's name as used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Whatwg => "whatwg",
            Profile::Rfc3986 => "rfc3986",
            Profile::Safe => "safe",
            Profile::Aggressive => "aggressive",
        }
    }

    /// Every profile, from the most faithful to the most aggressive.
    pub const ALL: [Profile; 4] = [
        Profile::Whatwg,
        Profile::Rfc3986,
        Profile::Safe,
        Profile::Aggressive,
    ];

    /// The dedup rules the profile runs by default.
    pub fn rule_mask(self) -> RuleMask {
        match self {
            Profile::Whatwg | Profile::Rfc3986 => RuleMask::NONE,
            Profile::Safe => RuleMask::up_to(Tier::Safe),
            Profile::Aggressive => RuleMask::up_to(Tier::Aggressive),
        }
    }

    /// Whether escapes are normalized (every profile but `whatwg`).
    pub fn normalizes_escapes(self) -> bool {
        self != Profile::Whatwg
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "whatwg" => Ok(Profile::Whatwg),
            "rfc3986" => Ok(Profile::Rfc3986),
            "safe" => Ok(Profile::Safe),
            "aggressive" => Ok(Profile::Aggressive),
            _ => Err(format!(
                "unknown profile '{s}' (expected whatwg, rfc3986, safe or aggressive)"
            )),
        }
    }
}

/// What one successful canonicalization produced.
///
/// ```
/// use canonurl::{Canonicalizer, Profile};
///
/// let mut out = Vec::new();
/// let mut c = Canonicalizer::new(Profile::Whatwg);
/// let canonical = c.canonicalize_into(b"https://EXAMPLE.com/p?q#f", &mut out).unwrap();
/// assert_eq!(canonical.parts.host(&out), Some(&b"example.com"[..]));
/// assert!(!canonical.unchanged); // the host was lower-cased
/// let canonical = c.canonicalize_into(b"https://example.com/", &mut Vec::new()).unwrap();
/// assert!(canonical.unchanged);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Canonical {
    /// Where each component lies, relative to the first byte written.
    pub parts: Parts,
    /// The output is byte for byte the input: the caller may borrow the input instead.
    pub unchanged: bool,
    /// The dedup rules that changed this URL (none for `whatwg` and `rfc3986`).
    pub fired: RuleMask,
}

/// A base URL, parsed once (WHATWG) and reused to resolve many relative references.
///
/// ```
/// use canonurl::{Base, Canonicalizer, Profile};
///
/// let mut c = Canonicalizer::new(Profile::Whatwg);
/// c.set_base(Some(Base::parse(b"https://example.com/dir/page").unwrap()));
/// let mut out = Vec::new();
/// c.canonicalize_into(b"../other?x=1", &mut out).unwrap();
/// assert_eq!(out, b"https://example.com/other?x=1");
/// // A relative reference is no base.
/// assert!(Base::parse(b"/dir/page").is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Base {
    href: Vec<u8>,
    parts: Parts,
}

impl Base {
    /// Parses an absolute URL to serve as a base. A relative reference or any
    /// rejected input gives `Reason::InvalidBase` (or the underlying reason).
    pub fn parse(input: &[u8]) -> Result<Base, Reject> {
        let mut c = Canonicalizer::new(Profile::Whatwg);
        let mut href = Vec::with_capacity(input.len() + 8);
        let canonical = c
            .canonicalize_into(input, &mut href)
            .map_err(|r| match r.reason {
                Reason::MissingScheme => Reject {
                    reason: Reason::InvalidBase,
                    offset: r.offset,
                },
                _ => r,
            })?;
        Ok(Base {
            href,
            parts: canonical.parts,
        })
    }

    /// The base's WHATWG href.
    pub fn as_bytes(&self) -> &[u8] {
        &self.href
    }

    /// The base's component offsets.
    pub fn parts(&self) -> &Parts {
        &self.parts
    }
}

/// Default bound on the input length, per URL.
pub const DEFAULT_MAX_INPUT_LEN: usize = 64 * 1024;

/// Canonicalizes URLs one at a time into caller-owned buffers.
///
/// It owns its scratch buffers and reuses them: once they have grown to the
/// largest input seen, canonicalizing makes no heap allocation (the IDNA slow
/// path for non-ASCII hosts excepted).
///
/// ```
/// use canonurl::{Base, Canonicalizer, Profile};
///
/// let mut c = Canonicalizer::new(Profile::Safe);
/// assert_eq!(c.profile(), Profile::Safe);
/// let mut out = Vec::new();
/// for url in [&b"http://A.example/x?utm_source=m"[..], b"http://a.example/x#top"] {
///     out.clear();
///     c.canonicalize_into(url, &mut out).unwrap();
///     assert_eq!(out, b"http://a.example/x");
/// }
/// // No dedup rules: what `rfc3986` writes, with the same reused buffers.
/// c.set_rules(None);
/// out.clear();
/// c.canonicalize_into(b"http://a.example/x#top", &mut out).unwrap();
/// assert_eq!(out, b"http://a.example/x#top");
/// // A base for relative references.
/// c.set_base(Some(Base::parse(b"https://b.example/dir/").unwrap()));
/// out.clear();
/// c.canonicalize_into(b"../up", &mut out).unwrap();
/// assert_eq!(out, b"https://b.example/up");
/// ```
#[derive(Clone, Debug)]
pub struct Canonicalizer {
    profile: Profile,
    max_input_len: usize,
    base: Option<Base>,
    scratch: parser::Scratch,
    rules: Option<Arc<RuleSet>>,
    rule_scratch: rules::apply::Scratch,
    reparse: Vec<u8>,
    /// The rules take the fused way for URLs the fast path takes
    /// (`rules::fused::fusable`).
    fused: bool,
    /// The fused rules can leave a URL as it is without making a plan
    /// (`rules::fused::quick`): decided once for the rule set.
    fused_quick: bool,
    /// The last call fired a rule (see [`Canonicalizer::before_rules`]).
    fired_last: bool,
}

/// How a canonicalizer with no rules and no base takes a target where it
/// lies ([`Canonicalizer::in_line`]): the same for every target, while the
/// canonicalizer is not changed (nothing made by a call of it is kept).
#[derive(Clone, Copy, Debug)]
pub(crate) struct InLineScan {
    /// The profile checks escapes (`rfc3986`).
    rfc3986: bool,
    max_input_len: usize,
}

/// The end of a target taken where it lies, appended at `out[start..]`,
/// if it is at most `max_input_len` long; if it is longer, the copy is
/// taken back. For [`Canonicalizer::target_in_line`] and
/// [`Canonicalizer::dotted_target_in_line`].
#[inline(always)]
fn in_line_length(
    end: Option<usize>,
    max_input_len: usize,
    start: usize,
    out: &mut Vec<u8>,
) -> Option<usize> {
    let end = end?;
    if end > max_input_len {
        out.truncate(start);
        return None;
    }
    Some(end)
}

/// What [`Canonicalizer::run`] does first with an input: a fast path, or
/// none (see [`Canonicalizer::fast_path`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum FastPath {
    /// `fast::canonical_http`: an absolute URL, or any input that is not an
    /// origin-form target.
    Http,
    /// `fast::canonical_target`: an origin-form target with no base.
    Target,
    /// None applies (an origin-form target with a base): the parser.
    Parser,
    /// Not tried at all: rules, or an input over the length limit, which
    /// `run_fused` (fused rules) or `run_general` handles from the start.
    NotTried,
}

impl Canonicalizer {
    /// A canonicalizer for `profile`, with no base URL.
    pub fn new(profile: Profile) -> Self {
        let mask = profile.rule_mask();
        let mut c = Canonicalizer {
            profile,
            max_input_len: DEFAULT_MAX_INPUT_LEN,
            base: None,
            scratch: parser::Scratch::default(),
            rules: None,
            rule_scratch: rules::apply::Scratch::default(),
            reparse: Vec::new(),
            fused: false,
            fused_quick: false,
            fired_last: false,
        };
        c.set_rules((!mask.is_empty()).then(|| Arc::new(RuleSet::new(mask, &[]))));
        c
    }

    /// Replaces the dedup rules (the profile's tier with default lists) by
    /// `rules`, e.g. one built by [`rules::file::build`] from `--rule` and a
    /// rules file. A set in which no rule is on for any host means none.
    pub fn set_rules(&mut self, rules: Option<Arc<RuleSet>>) {
        self.rules = rules.filter(|r| !r.any_enabled().is_empty());
        self.fused = self.rules.as_deref().is_some_and(rules::fused::fusable);
        self.fused_quick = self.fused && self.rules.as_deref().is_some_and(rules::fused::quick);
    }

    /// Like [`set_rules`](Self::set_rules), by value.
    pub fn with_rules(mut self, rules: Arc<RuleSet>) -> Self {
        self.set_rules(Some(rules));
        self
    }

    /// The dedup rules, if any run.
    pub fn rules(&self) -> Option<&Arc<RuleSet>> {
        self.rules.as_ref()
    }

    /// Whether [`before_rules`](Self::before_rules) is wanted: the rules then
    /// copy each URL they change before changing it (off by default, so
    /// that a URL the rules change is edited in place without a copy).
    pub fn set_keep_before_rules(&mut self, keep: bool) {
        self.rule_scratch.keep_before = keep;
    }

    /// The rewrite rules that changed the last URL, in the order they ran,
    /// by number ([`RuleSet::rewrite_id`] gives a rule's `id`): empty
    /// unless the last call succeeded with `rewrite` in `fired`.
    pub fn fired_rewrites(&self) -> &[u32] {
        if self.fired_last {
            self.rule_scratch.fired_rewrites()
        } else {
            &[]
        }
    }

    /// The last canonical URL as it was before the dedup rules changed it:
    /// `Some` only when [`set_keep_before_rules`](Self::set_keep_before_rules)
    /// is on and the last call succeeded with `fired` not empty (when no rule
    /// fired, the output is that form). For counting what the rules merged
    /// without canonicalizing twice.
    pub fn before_rules(&self) -> Option<&[u8]> {
        (self.fired_last && self.rule_scratch.keep_before).then(|| self.rule_scratch.before_rules())
    }

    /// Sets the base URL that relative references resolve against.
    pub fn with_base(mut self, base: Base) -> Self {
        self.base = Some(base);
        self
    }

    /// Sets or clears the base URL.
    pub fn set_base(&mut self, base: Option<Base>) {
        self.base = base;
    }

    /// The base URL, if any.
    pub fn base(&self) -> Option<&Base> {
        self.base.as_ref()
    }

    /// Sets the maximum input length in bytes (inputs longer are rejected
    /// with `Reason::InputTooLong`). Capped at `u32::MAX / 4` so that
    /// offsets of the (at most 3× longer) output fit in `u32`.
    pub fn set_max_input_len(&mut self, max: usize) {
        self.max_input_len = max.min(u32::MAX as usize / 4);
    }

    /// The profile.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Appends the canonical form of `input` to `out`, the WHATWG way: an
    /// absolute URL, or a relative reference resolved against the base.
    /// On error nothing is left appended to `out`.
    ///
    /// ```
    /// use canonurl::{Canonicalizer, Profile};
    ///
    /// let mut c = Canonicalizer::new(Profile::Rfc3986);
    /// let mut out = b"first\n".to_vec();
    /// c.canonicalize_into(b"http://a.example/x/../y", &mut out).unwrap();
    /// assert_eq!(out, b"first\nhttp://a.example/y");
    /// let reject = c.canonicalize_into(b"http://a b/", &mut out).unwrap_err();
    /// assert_eq!((reject.reason.name(), reject.offset), ("forbidden-domain-code-point", 8));
    /// assert_eq!(out, b"first\nhttp://a.example/y"); // nothing appended
    /// ```
    // Inlined: in a caller's loop, a canonical http(s) URL then costs one
    // call, the fast path's (see `fast::canonical_http`).
    #[inline]
    pub fn canonicalize_into(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Canonical, Reject> {
        self.run(input, Mode::Url, out)
    }

    /// Like [`canonicalize_into`](Self::canonicalize_into), for an HTTP request
    /// target as found in logs: with no base, an origin-form target (starting
    /// with `/`) is canonicalized on its own and written as path and query
    /// only, without scheme and host (path-only mode, with `http` rules).
    ///
    /// ```
    /// use canonurl::{Canonicalizer, Profile};
    ///
    /// let mut c = Canonicalizer::new(Profile::Rfc3986);
    /// let mut out = Vec::new();
    /// c.canonicalize_target(b"/a/./b/../c?q=%7e", &mut out).unwrap();
    /// assert_eq!(out, b"/a/c?q=~");
    /// ```
    pub fn canonicalize_target(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Canonical, Reject> {
        self.run(input, Mode::Target, out)
    }

    /// Canonicalizes into a `bumpalo` arena and returns the bytes from it, so
    /// that many canonical URLs can be kept at once with one bump allocation
    /// each and no heap allocation per URL. The URL is written to a reused
    /// buffer first and then copied into the arena (on error nothing is
    /// allocated).
    ///
    /// ```
    /// use canonurl::{Canonicalizer, Profile};
    ///
    /// let arena = bumpalo::Bump::new();
    /// let mut c = Canonicalizer::new(Profile::Rfc3986);
    /// let urls: Vec<&[u8]> = [&b"HTTP://A.example/%7e"[..], b"http://b.example:80/./x"]
    ///     .iter()
    ///     .map(|u| c.canonicalize_in(u, &arena).unwrap().0)
    ///     .collect();
    /// assert_eq!(urls, [&b"http://a.example/~"[..], b"http://b.example/x"]);
    /// assert!(c.canonicalize_in(b"http://[::1/", &arena).is_err());
    /// ```
    pub fn canonicalize_in<'a>(
        &mut self,
        input: &[u8],
        arena: &'a bumpalo::Bump,
    ) -> Result<(&'a [u8], Canonical), Reject> {
        let mut out = std::mem::take(&mut self.scratch.arena_out);
        out.clear();
        let result = self.canonicalize_into(input, &mut out);
        let bytes: &'a [u8] = match result {
            Ok(_) => arena.alloc_slice_copy(&out),
            Err(_) => &[],
        };
        self.scratch.arena_out = out;
        result.map(|c| (bytes, c))
    }

    #[inline]
    fn run(&mut self, input: &[u8], mode: Mode, out: &mut Vec<u8>) -> Result<Canonical, Reject> {
        self.fired_last = false;
        // Most URLs in logs are canonical already: recognized in one pass and
        // copied whole. An absolute http(s) URL means the same with or
        // without a base, and in either mode. Tried here, before anything
        // else is set up: `run_general` stays out of line, and the fast
        // path's caller saves few registers (about 40 instructions per URL
        // on `kasztp.txt`, `benches/instructions.sh`).
        let path = self.fast_path(input, mode);
        let rfc3986 = self.profile.normalizes_escapes();
        let fast = match path {
            FastPath::Http => fast::canonical_http(input, rfc3986, out),
            // Through `run_general`, the call and the moves of its result
            // cost about 40 instructions a line more (`benches/guard.sh`,
            // pipeline/combined).
            FastPath::Target => fast::canonical_target(input, rfc3986, out),
            FastPath::Parser | FastPath::NotTried => None,
        };
        if let Some((parts, unchanged)) = fast {
            return Ok(Canonical {
                parts,
                unchanged,
                fired: RuleMask::NONE,
            });
        }
        // A quick rule set (`safe`) straight to its own way: through
        // `run_general`, a call in and out more (kasztp `safe` 421.5 →
        // 411.6 instructions a URL without it, `benches/guard.sh`). The
        // other fused rule sets (`aggressive`) too: kasztp 691.1 → 685.8,
        // node_files 382.0 → 375.0.
        if self.fused_quick {
            return self.run_fused_quick(input, mode, out);
        }
        if self.fused {
            return self.run_fused(input, mode, out);
        }
        self.run_general(input, mode, out, path != FastPath::NotTried)
    }

    /// Which fast path [`run`](Self::run) tries on `input` in `mode`: the
    /// decision that [`LineScan::canonical_len`] takes too, once it knows
    /// the line's length.
    #[inline(always)]
    fn fast_path(&self, input: &[u8], mode: Mode) -> FastPath {
        if input.len() > self.max_input_len || self.rules.is_some() {
            return FastPath::NotTried;
        }
        // An origin-form target (`/path`), most of what logs hold, is never
        // an http URL: not tried as one (79 instructions per line of the
        // generated combined log went to the dispatch and setup that say
        // no). With no base it is written path-only; with one it is
        // resolved against it, which is the parser's.
        if mode != Mode::Target || input.first() != Some(&b'/') {
            FastPath::Http
        } else if self.base.is_none() {
            FastPath::Target
        } else {
            FastPath::Parser
        }
    }

    /// The scan that tells which lines of a list of URLs
    /// [`canonicalize_target`](Self::canonicalize_target) would append as
    /// they are ([`LineScan`]), with the fast path's decisions that do not
    /// depend on the line taken once; `None` with rules, which the fast
    /// path leaves alone.
    pub(crate) fn line_scan(&mut self) -> Option<LineScan> {
        if self.rules.is_some() {
            return None;
        }
        // As after any input the fast path takes.
        self.fired_last = false;
        Some(LineScan {
            strict_escapes: self.profile.normalizes_escapes(),
            base: self.base.is_some(),
            max_len: self.max_input_len,
        })
    }

    /// [`canonicalize_target`](Self::canonicalize_target) of a request
    /// target that still lies in its log line: `line` starts with the
    /// target, which ends at its first space. When the fast path takes it
    /// (as `canonicalize_target` would take the target alone, and with no
    /// `\\` in it), its canonical form is appended to `out` and its length
    /// returned; otherwise nothing is appended and the caller finds the
    /// target's end itself. For a log reader whose request field ends in a
    /// known way after the target: one scan finds the end and the canonical
    /// form, and the reader's other steps are skipped (pipeline/combined of
    /// `benches/guard.sh`: 890.8 → 603.5 instructions a line; BENCHMARKS.md
    /// has what came after).
    ///
    /// `chunk` is the engine of the caller's loop, which runs under
    /// `simd::dispatch` (see [`fast::canonical_target_in_line_with`]).
    /// `scan` is what [`in_line`](Self::in_line) gave, once for the
    /// caller's loop: the tests it made are the same for every target.
    #[inline(always)]
    pub(crate) fn target_in_line<C: Chunk>(
        scan: InLineScan,
        chunk: C,
        line: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        // `fast_path` of an origin-form target: `Target` with no rules and
        // no base, the length checked once the end is known.
        let start = out.len();
        let end = fast::canonical_target_in_line_with(chunk, line, scan.rfc3986, out);
        in_line_length(end, scan.max_input_len, start, out)
    }

    /// Whether targets may be taken where they lie
    /// ([`target_in_line`](Self::target_in_line)), with no rules and no
    /// base, and how: asked once for a loop over many. Made per target,
    /// its tests of the canonicalizer's fields cost about 8 instructions a
    /// line (pipeline/combined).
    #[inline(always)]
    pub(crate) fn in_line(&mut self) -> Option<InLineScan> {
        let rfc3986 = self.in_line_profile()?;
        Some(InLineScan {
            rfc3986,
            max_input_len: self.max_input_len,
        })
    }

    /// The longest input taken ([`set_max_input_len`](Self::set_max_input_len)).
    #[inline(always)]
    pub(crate) fn max_input_len(&self) -> usize {
        self.max_input_len
    }

    /// Whether targets may be taken where they lie ([`target_in_line`]
    /// (Self::target_in_line) and the others): with no rules and no base.
    #[inline(always)]
    pub(crate) fn takes_in_line(&self) -> bool {
        self.rules.is_none() && self.base.is_none()
    }

    /// Whether a target may be taken where it lies (with no rules and no
    /// base): if so, whether escapes are checked (`rfc3986`).
    #[inline(always)]
    fn in_line_profile(&mut self) -> Option<bool> {
        if self.rules.is_some() || self.base.is_some() {
            return None;
        }
        self.fired_last = false;
        Some(self.profile.normalizes_escapes())
    }

    /// [`target_in_line`](Self::target_in_line) of a target that it left
    /// for its dot segments (`/cgi-bin/../../etc/passwd`, `/a/./b`): taken
    /// here with them removed, as the general parser writes the target
    /// (see [`fast::canonical_dotted_target_in_line`]). For the lines that
    /// `target_in_line` leaves, before the general parser: on
    /// pipeline/combined the lines with dot segments cost about 1,750
    /// instructions through it.
    pub(crate) fn dotted_target_in_line(
        &mut self,
        line: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        let rfc3986 = self.in_line_profile()?;
        let start = out.len();
        let end = fast::canonical_dotted_target_in_line(line, rfc3986, out);
        in_line_length(end, self.max_input_len, start, out)
    }

    /// [`run_parser`](Self::run_parser) with rules that run fused with
    /// the fast path (`rules::fused`): the rules' own copy of the fast
    /// path, which does not copy the URL (the rules write it with their
    /// edits made), then `run_parser` for what it does not take. Apart,
    /// so that the profiles without rules keep their code.
    #[inline(never)]
    fn run_fused(
        &mut self,
        input: &[u8],
        mode: Mode,
        out: &mut Vec<u8>,
    ) -> Result<Canonical, Reject> {
        match self.fused_scan(input, mode) {
            Some((parts, false, facts)) => {
                return self.fused_rules::<false>(input, &parts, facts, out)
            }
            Some((parts, true, _)) => return self.upper_case_then_rules(input, parts, out),
            None => {}
        }
        // An http URL is not canonical as it stands (or the input is too
        // long, which `run_parser` says first).
        self.run_parser(input, mode, out, true)
    }

    /// A URL the fused rules' scan took with escapes to upper-case: copied
    /// with them upper-cased, and the in-place rules.
    #[inline(always)]
    fn upper_case_then_rules(
        &mut self,
        input: &[u8],
        parts: Parts,
        out: &mut Vec<u8>,
    ) -> Result<Canonical, Reject> {
        let start = out.len();
        fast::write_scanned(input, &parts, true, out);
        let mut canonical = Canonical {
            parts,
            unchanged: false,
            fired: RuleMask::NONE,
        };
        self.run_rules(input, out, start, &mut canonical)?;
        Ok(canonical)
    }

    /// [`run_fused`](Self::run_fused) after its scan, for
    /// [`run_fused_quick`](Self::run_fused_quick)'s URLs that its check
    /// did not keep, with what the quick way's scan found: they were
    /// scanned again by `run_fused` (about 200 instructions each, 13.6 % of
    /// userbait's URLs under `safe`). Apart, so that the quick way's own
    /// code stays small.
    #[inline(never)]
    fn run_fused_scanned(
        &mut self,
        input: &[u8],
        parts: Parts,
        lower_hex: bool,
        facts: fast::PathFacts,
        out: &mut Vec<u8>,
    ) -> Result<Canonical, Reject> {
        if lower_hex {
            return self.upper_case_then_rules(input, parts, out);
        }
        // A query that the rules leave (most), and no other rule that
        // fires: copied as it is, as the quick way's check copies a URL
        // without a query, not planned and written (kasztp's URLs with a
        // query under `safe`, BENCHMARKS.md).
        if let Some(set) = &self.rules {
            if parts.query_start != ABSENT
                && rules::fused::unchanged::<true>(set.global(), input, &parts, facts)
            {
                out.extend_from_slice(input);
                return Ok(Canonical {
                    parts,
                    unchanged: true,
                    fired: RuleMask::NONE,
                });
            }
        }
        self.fused_rules::<true>(input, &parts, facts, out)
    }

    /// The fused rules' scan of `input` (`fast::scan_canonical`; an
    /// origin-form target without a base is scanned as a target), `None`
    /// also when `input` is longer than the fast path takes.
    #[inline(always)]
    fn fused_scan(&self, input: &[u8], mode: Mode) -> Option<(Parts, bool, fast::PathFacts)> {
        if input.len() > self.max_input_len {
            return None;
        }
        let origin = mode == Mode::Target && self.base.is_none() && input.first() == Some(&b'/');
        fast::scan_canonical(input, self.profile.normalizes_escapes(), origin)
    }

    /// [`run_fused`](Self::run_fused) for a rule set that
    /// [`rules::fused::quick`] says yes to (`safe`): a URL that the scan
    /// takes and no rule can change ([`rules::fused::unchanged`]) is copied
    /// without a plan, one it does not take goes to the parser, and any
    /// other to the fused rules with what the scan found
    /// (`run_fused_scanned`), not scanned again. The check runs inside
    /// the scan's job (`fast::scan_canonical_kept`), on the offsets where
    /// the scan leaves them, and the copy is made there as the fast path
    /// makes it: kasztp `safe` 428.6 → 421.5 instructions a URL
    /// (`benches/guard.sh`), against `unchanged` after the scan's return.
    /// Apart from `run_fused`, whose code stays as it is for the other rule
    /// sets (the check inside it made `aggressive` dearer: kasztp 712.9 →
    /// 736.8; two copies of it, one per kind of rule set, 790.6).
    #[inline(never)]
    fn run_fused_quick(
        &mut self,
        input: &[u8],
        mode: Mode,
        out: &mut Vec<u8>,
    ) -> Result<Canonical, Reject> {
        let (Some(set), true) = (&self.rules, input.len() <= self.max_input_len) else {
            // Too long: as `run_fused` does.
            return self.run_parser(input, mode, out, true);
        };
        let cfg = set.global();
        let origin = mode == Mode::Target && self.base.is_none() && input.first() == Some(&b'/');
        let strict = self.profile.normalizes_escapes();
        let kept = fast::scan_canonical_kept(input, strict, origin, out, |parts, facts| {
            rules::fused::unchanged::<false>(cfg, input, parts, facts)
        });
        match kept {
            Some((parts, Kept::Yes)) => Ok(Canonical {
                parts,
                unchanged: true,
                fired: RuleMask::NONE,
            }),
            // Not canonical as it stands: as `run_fused` does.
            None => self.run_parser(input, mode, out, true),
            Some((parts, Kept::No { lower_hex, facts })) => {
                self.run_fused_scanned(input, parts, lower_hex, facts, out)
            }
        }
    }

    /// [`run`](Self::run) for every input the fast path did not take with
    /// no fused rules (`run` calls [`run_fused_quick`](Self::run_fused_quick)
    /// and [`run_fused`](Self::run_fused) itself): [`run_parser`](Self::run_parser).
    /// `fast_tried`: as `run_parser`'s.
    ///
    /// Not in `run`, which is inlined into its callers: there the parser's
    /// call kept `canonicalize_target` from being inlined into the log loop
    /// (24 instructions a line more on a combined log with no rule,
    /// `benches/guard.sh`'s pipeline/combined).
    #[inline(never)]
    fn run_general(
        &mut self,
        input: &[u8],
        mode: Mode,
        out: &mut Vec<u8>,
        fast_tried: bool,
    ) -> Result<Canonical, Reject> {
        debug_assert!(!self.fused_quick && !self.fused);
        self.run_parser(input, mode, out, fast_tried)
    }

    /// The fast paths, then the parser, then the in-place rules.
    /// `fast_tried`: the fast path that can take `input` (`canonical_http`,
    /// or `canonical_target` for an origin-form target without a base)
    /// already said no, or none can.
    #[inline(never)]
    fn run_parser(
        &mut self,
        input: &[u8],
        mode: Mode,
        out: &mut Vec<u8>,
        fast_tried: bool,
    ) -> Result<Canonical, Reject> {
        if input.len() > self.max_input_len {
            return Err(Reject {
                reason: Reason::InputTooLong,
                offset: self.max_input_len,
            });
        }
        let start = out.len();
        let base = self.base.as_ref().map(|b| (b.href.as_slice(), &b.parts));
        let rfc3986 = self.profile.normalizes_escapes();
        // Most URLs in logs are canonical already: recognized in one pass and
        // copied whole. An absolute http(s) URL means the same with or
        // without a base, and in either mode.
        let origin_form = mode == Mode::Target && input.first() == Some(&b'/');
        let fast = if fast_tried {
            None
        } else if origin_form && base.is_none() {
            // An origin-form request target with no host: path-only.
            fast::canonical_target(input, rfc3986, out)
        } else {
            fast::canonical_http(input, rfc3986, out)
        };
        // A URL that lacks only its path `/` (`http://example.com`), before
        // the parser is tried.
        let fast = match fast {
            None if !origin_form => fast::canonical_bare_http(input, rfc3986, out),
            taken => taken,
        };
        let mut canonical = if let Some((parts, unchanged)) = fast {
            debug_assert!(parts.is_consistent(&out[start..]));
            Canonical {
                parts,
                unchanged,
                fired: RuleMask::NONE,
            }
        } else {
            match parser::parse(input, base, mode, out, &mut self.scratch) {
                Ok(mut parts) => {
                    if rfc3986 {
                        let tail = &mut self.scratch.rfc3986_tail;
                        rfc3986::normalize(out, start, &mut parts, tail);
                    }
                    debug_assert!(parts.is_consistent(&out[start..]));
                    let unchanged = &out[start..] == input;
                    Canonical {
                        parts,
                        unchanged,
                        fired: RuleMask::NONE,
                    }
                }
                Err(reject) => {
                    out.truncate(start);
                    return Err(reject);
                }
            }
        };
        if self.rules.is_some() {
            self.run_rules(input, out, start, &mut canonical)?;
        }
        Ok(canonical)
    }

    /// The rules, fused with the fast path, on `input`, which the fast path
    /// took with `parts` (canonical as it stands): written to `out` with
    /// the rules' edits made, or copied and left to the in-place rules when
    /// they would do more (see `rules::fused`). `QUICK`: called from
    /// `run_fused_scanned` (the quick way's URLs that its check did not
    /// keep), not `run_fused`: each caller has its own copy, which the
    /// compiler inlines with what it calls as it did when there was one
    /// (with one function called from both, `fused_rules`, then
    /// `rules::fused::plan` and `rules::path::plan` were left out of line,
    /// and `aggressive` cost 25 to 55 instructions a URL more).
    #[inline]
    fn fused_rules<const QUICK: bool>(
        &mut self,
        input: &[u8],
        parts: &Parts,
        facts: fast::PathFacts,
        out: &mut Vec<u8>,
    ) -> Result<Canonical, Reject> {
        let start = out.len();
        let scratch = &mut self.rule_scratch;
        let plan = match &self.rules {
            Some(set) => rules::fused::plan::<QUICK>(set.global(), input, parts, facts, scratch),
            None => None,
        };
        let mut canonical = match plan {
            Some(plan) if plan.fired.is_empty() => {
                out.extend_from_slice(input);
                return Ok(Canonical {
                    parts: *parts,
                    unchanged: true,
                    fired: RuleMask::NONE,
                });
            }
            Some(plan) => {
                let parts = rules::fused::write::<QUICK>(input, parts, &plan, scratch, out);
                debug_assert!(parts.is_consistent(&out[start..]));
                scratch.fused(input);
                self.fired_last = true;
                return Ok(Canonical {
                    parts,
                    unchanged: &out[start..] == input,
                    fired: plan.fired,
                });
            }
            None => {
                out.extend_from_slice(input);
                Canonical {
                    parts: *parts,
                    unchanged: true,
                    fired: RuleMask::NONE,
                }
            }
        };
        // The in-place rules decide again.
        self.run_rules(input, out, start, &mut canonical)?;
        Ok(canonical)
    }

    /// The dedup rules, after the URL is canonical: the built-in rules in
    /// place, then the user's rewrites, and when one fired, the result is
    /// parsed again and the built-in rules run once more; last,
    /// `trailing-slash=add`'s slash (so that a rewrite's pattern is written
    /// against `/story?id=12`, as the user sees the URL, not `/story/?id=12`).
    fn run_rules(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        start: usize,
        canonical: &mut Canonical,
    ) -> Result<(), Reject> {
        // Taken out for the call, so that its configuration can be read
        // while the scratch is written; put back whatever the result.
        let Some(set) = self.rules.take() else {
            return Ok(());
        };
        let result = self.run_rules_of(&set, input, out, start, canonical);
        self.rules = Some(set);
        result
    }

    fn run_rules_of(
        &mut self,
        set: &RuleSet,
        input: &[u8],
        out: &mut Vec<u8>,
        start: usize,
        canonical: &mut Canonical,
    ) -> Result<(), Reject> {
        self.rule_scratch.start();
        let web = rules::apply::is_web(&out[start..], &canonical.parts);
        let mut fired = RuleMask::NONE;
        // Aliases first: the target host's section applies.
        if web
            && set.has_aliases()
            && rules::apply::alias(
                set,
                out,
                start,
                &mut canonical.parts,
                &mut self.rule_scratch,
            )
        {
            fired.insert(rules::Rule::HostAlias);
        }
        let mut cfg = set.for_host(canonical.parts.host(&out[start..]));
        if cfg.enabled.is_empty() && fired.is_empty() {
            return Ok(());
        }
        let scratch = &mut self.rule_scratch;
        if !web {
            fired = rules::apply::other_scheme(cfg, out, start, &mut canonical.parts, scratch);
        } else {
            let parts = &mut canonical.parts;
            fired.0 |= rules::apply::builtins_settled(set, &mut cfg, out, start, parts, scratch).0;
            if rules::apply::has_rewrites(cfg)
                && self.rewrite(out, start, canonical, &mut fired, cfg)?
            {
                // The rewritten URL may be another host's: its aliases and
                // section, and their built-in rules (not their rewrites:
                // rewrites run once).
                let scratch = &mut self.rule_scratch;
                let parts = &mut canonical.parts;
                if set.has_aliases() && rules::apply::alias(set, out, start, parts, scratch) {
                    fired.insert(rules::Rule::HostAlias);
                }
                cfg = set.for_host(parts.host(&out[start..]));
                fired.0 |=
                    rules::apply::builtins_settled(set, &mut cfg, out, start, parts, scratch).0;
            }
            let scratch = &mut self.rule_scratch;
            fired.0 |= rules::apply::finish(cfg, out, start, &mut canonical.parts, scratch).0;
        }
        if fired.is_empty() {
            return Ok(());
        }
        canonical.fired = fired;
        debug_assert!(canonical.parts.is_consistent(&out[start..]));
        canonical.unchanged = &out[start..] == input;
        self.fired_last = true;
        Ok(())
    }

    /// Runs `cfg`'s rewrites on the URL at `out[start..]` and, when one
    /// changed it, parses the result again; whether one did.
    fn rewrite(
        &mut self,
        out: &mut Vec<u8>,
        start: usize,
        canonical: &mut Canonical,
        fired: &mut RuleMask,
        cfg: &rules::Config,
    ) -> Result<bool, Reject> {
        if !rules::apply::rewrites(cfg, out, start, &canonical.parts, &mut self.rule_scratch) {
            return Ok(false);
        }
        fired.insert(rules::Rule::Rewrite);
        // A rewrite may have written anything: parse the result again (no
        // base: it is absolute, or a path-only target).
        let mode = if canonical.parts.scheme_end == ABSENT {
            Mode::Target
        } else {
            Mode::Url
        };
        self.reparse.clear();
        self.reparse.extend_from_slice(&out[start..]);
        out.truncate(start);
        match parser::parse(&self.reparse, None, mode, out, &mut self.scratch) {
            Ok(mut parts) => {
                rfc3986::normalize(out, start, &mut parts, &mut self.scratch.rfc3986_tail);
                canonical.parts = parts;
                Ok(true)
            }
            Err(r) => {
                out.truncate(start);
                Err(Reject {
                    reason: Reason::InvalidRewrite,
                    offset: r.offset,
                })
            }
        }
    }
}

/// A canonicalizer's fast path for lines of a list of URLs, from
/// [`Canonicalizer::line_scan`]: with no rules, what `canonicalize_target`
/// would do with a line, told by the scan that finds the line's end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LineScan {
    strict_escapes: bool,
    /// Origin-form targets are resolved against a base: not taken.
    base: bool,
    /// The longest input the canonicalizer takes.
    max_len: usize,
}

impl LineScan {
    /// Whether [`Canonicalizer::canonicalize_target`] would append the
    /// line that starts `rest` (the rest of a list of URLs) as it is, as
    /// far as the fast path's scan alone can tell, with nothing copied: if
    /// so, the line's length, the index of its `\n`, which the scan finds;
    /// `None` means "not known" (or no `\n` follows), and the caller finds
    /// the line's end and canonicalizes it. For a caller that writes a run
    /// of such lines from where they lie (the plain pipe: a line that is
    /// its own canonical URL is its own output line), which saves the copy
    /// of each, the return of its parts and a search for each line's end.
    ///
    /// `chunk` is the engine of the caller's loop, which runs under
    /// `simd::dispatch`, as for [`Canonicalizer::target_in_line`].
    #[inline(always)]
    pub(crate) fn canonical_len<C: Chunk>(self, chunk: C, rest: &[u8]) -> Option<usize> {
        // `Canonicalizer::fast_path` of the line.
        let origin = rest.first() == Some(&b'/');
        if origin && self.base {
            return None;
        }
        let len = fast::canonical_line_with(chunk, rest, self.strict_escapes, origin)?;
        (len <= self.max_len).then_some(len)
    }
}
