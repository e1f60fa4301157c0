//! The rules fused with the fast path: for a URL the fast path took (it is
//! canonical as it stands), the rules' decisions are made on the input
//! itself, and the URL is written once with their edits made, not copied
//! and then edited in place (see `apply.rs`).
//!
//! The edits made here cut or add bytes at a component's edge (the
//! fragment, `www.` labels, an index file, `trailing-slash=add`'s slash) or
//! replace the query with what the query rules wrote (`query::rewrite`,
//! which reads it once). A URL whose path segments or host the rules would
//! rewrite otherwise is left to the in-place rules ([`plan`] says `None`),
//! which then decide everything again: each decision is made by the
//! function the in-place rules use (`path::plan`, `host::plan`,
//! `query::rewrite`), so both ways give the same bytes (the tests below
//! compare them).
//!
//! Only a rule set with one configuration for every URL is fused
//! ([`fusable`]): no host section, alias, path section or rewrite, and none
//! of the rules that the fused way leaves to the in-place one.

use super::apply::{is_web, Scratch};
use super::query::{self, Outcome};
use super::{host, path, Config, Rule, RuleMask, RuleSet, TrailingSlash};
use crate::url::fast::PathFacts;
use crate::url::parts::{Parts, ABSENT};
use crate::url::simd::push_short;

/// Whether `set` takes the fused way: one configuration for every URL, and
/// none of `lowercase-path`, `https-as-http`, `http-as-https`,
/// `trailing-slash=remove` (rewrites of the path or scheme, left to the
/// in-place rules).
pub(crate) fn fusable(set: &RuleSet) -> bool {
    let g = set.global();
    let on = g.enabled;
    !set.has_aliases()
        && !set.has_hosts()
        && g.paths.is_empty()
        && !super::apply::has_rewrites(g)
        && !on.has(Rule::LowercasePath)
        && !on.has(Rule::HttpsAsHttp)
        && !on.has(Rule::HttpAsHttps)
        && !(on.has(Rule::TrailingSlash) && g.trailing_slash == TrailingSlash::Remove)
}

/// The edits [`plan`] decided on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    /// The rules that change the URL.
    pub(crate) fired: RuleMask,
    /// Bytes removed at the host's start (`www.`).
    www: u32,
    /// Where the path's kept bytes end (before an index file).
    path_cut: u32,
    /// `trailing-slash=add`'s slash after them.
    slash: bool,
    /// The query rules change the query: `Scratch::query` says how (kept
    /// out of the plan, which the fused way passes for every URL).
    query: bool,
    /// Where the kept bytes end (before a removed fragment).
    end: u32,
}

/// Whether the fused rules of `set` may ask [`unchanged`] before making a
/// plan: none of its rules reads the path's last segment (`index-file`,
/// `trailing-slash`), which [`unchanged`] does not look at. Decided once
/// per rule set (`Canonicalizer::set_rules`); `set` is [`fusable`].
pub(crate) fn quick(set: &RuleSet) -> bool {
    set.global().enabled.0 & path::LAST_SEGMENT_RULES.0 == 0
}

/// Whether no rule of `cfg` (a [`quick`] one) can change `input`, a URL
/// the fast path took with `parts` and `facts`, told from the scan's
/// offsets and a few bytes: no fragment that `fragment` cuts, and for a
/// web URL no segment that `session` or `duplicate-slashes` may rewrite, a
/// host that no host rule looks at twice, and no query; with `QUERY`, a
/// query that the query rules leave as it is ([`query::stays`], asked
/// last). The common case of a rule set such as `safe`, decided without
/// making a [`Plan`]; when it says `false`, [`plan`] decides (the same
/// rules, so `true` only where `plan` would fire nothing and not say
/// `None`). `QUERY` is for the quick way's URLs that the scan's own check
/// (without it) did not keep: asked inside the scan, the call to
/// `query::stays` made every URL dearer (`safe` node_files, which has no
/// query, 328.0 → 351.9 instructions a URL, `benches/guard.sh`).
#[inline(always)]
pub(crate) fn unchanged<const QUERY: bool>(
    cfg: &Config,
    input: &[u8],
    parts: &Parts,
    facts: PathFacts,
) -> bool {
    let on = cfg.enabled;
    debug_assert_eq!(on.0 & path::LAST_SEGMENT_RULES.0, 0);
    if parts.fragment_start != ABSENT && on.has(Rule::Fragment) {
        return false;
    }
    // `file:` (see `plan`): only `fragment`.
    if parts.scheme_end != ABSENT && input.first() != Some(&b'h') {
        return true;
    }
    if (!QUERY && parts.query_start != ABSENT)
        || (on.has(Rule::Session) && facts.session)
        || (on.has(Rule::DuplicateSlashes) && facts.double_slash)
    {
        return false;
    }
    let (hs, he) = (parts.host_start as usize, parts.host_end as usize);
    if parts.host_start != ABSENT && hs < he {
        let (first, last) = (input[hs], input[he - 1]);
        if (first == b'[' && on.has(Rule::Ipv4Mapped))
            || (last == b'.' && on.has(Rule::HostTrailingDot))
            || (first == b'w' && on.has(Rule::Www))
        {
            return false;
        }
    }
    !QUERY
        || parts.query_start == ABSENT
        || query::stays(
            cfg,
            &input[parts.query_start as usize + 1..parts.query_end() as usize],
        )
}

/// The rules of `cfg` on `input`, a URL the fast path took with `parts`
/// (canonical as it stands: no escape's hex to upper-case) and `facts`,
/// decided on the input: `None` when they would rewrite more than [`Plan`]
/// writes. `QUICK`: `Canonicalizer::fused_rules`' (its own copy for each
/// caller, so that each is inlined as it was with one).
#[inline]
pub(crate) fn plan<const QUICK: bool>(
    cfg: &Config,
    input: &[u8],
    parts: &Parts,
    facts: PathFacts,
    s: &mut Scratch,
) -> Option<Plan> {
    let on = cfg.enabled;
    let mut fired = RuleMask::NONE;
    let mut end = parts.len;
    if parts.fragment_start != ABSENT && on.has(Rule::Fragment) {
        end = parts.fragment_start;
        fired.insert(Rule::Fragment);
    }
    let pe = parts.path_end();
    // `is_web`, from what the fast path takes: no scheme (a request
    // target), `http`, `https` or `file`, of which only `file` does not
    // start with `h`.
    let web = parts.scheme_end == ABSENT || input.first() == Some(&b'h');
    debug_assert_eq!(web, is_web(input, parts));
    if !web {
        // `file:`: only `fragment` (`apply::other_scheme`).
        return Some(Plan {
            fired,
            www: 0,
            path_cut: pe,
            slash: false,
            query: false,
            end,
        });
    }
    // Userinfo, an IP address and other rewritten hosts are left to the
    // general parser by the fast path.
    debug_assert_eq!(parts.username_start, parts.host_start);
    let ps = parts.path_start;
    let (kept, slash) =
        path::plan::<QUICK>(cfg, input, (ps as usize, pe as usize), facts, s, &mut fired)?;
    let mut www = 0;
    if parts.host_start != ABSENT {
        let h = &input[parts.host_start as usize..parts.host_end as usize];
        www = host::plan(cfg, h, &mut fired)? as u32;
    }
    // Last: the only decision that writes (a changed query), made once the
    // others have not handed the URL to the in-place rules.
    let mut query = false;
    if parts.query_start != ABSENT {
        let q = &input[parts.query_start as usize + 1..parts.query_end() as usize];
        let (buf, params, movable) = (&mut s.buf, &mut s.params, &mut s.movable);
        // Its own copy of `fired` for the call (out of line): given the
        // plan's, the whole plan had to lie in memory for every URL, and
        // was copied through the stack on its way to the writer.
        let mut fired_here = fired;
        // The quick way (`QUICK`) asked `query::stays` before it came
        // here, for most URLs that reach this with a query: not asked
        // again (the outcome is the same either way).
        let edit = query::rewrite(cfg, q, buf, params, movable, &mut fired_here);
        fired = fired_here;
        if edit != Outcome::Same {
            s.query = edit;
            query = true;
        }
    }
    // Made whole at the end, from values.
    Some(Plan {
        fired,
        www,
        path_cut: ps + kept as u32,
        slash,
        query,
        end,
    })
}

/// Appends `input` with `plan`'s edits made (`plan.fired` is not empty),
/// and returns the parts of what was written. `s`: the scratch space the
/// plan was made with (a new query is there). `QUICK`: as [`plan`]'s.
#[inline]
pub(crate) fn write<const QUICK: bool>(
    input: &[u8],
    parts: &Parts,
    plan: &Plan,
    s: &Scratch,
    out: &mut Vec<u8>,
) -> Parts {
    let moved = if plan.query {
        write_query(input, parts, *plan, s, out)
    } else {
        write_cut(input, parts, plan, out)
    };
    // Made here, whole, from what moved: built by each writer from a copy
    // of `parts`, they were copied twice more on the way to the caller's
    // result (callgrind: about 10 instructions a URL the rules change).
    // A `www.` cut moves the host's end and the path's start back.
    Parts {
        host_end: parts.host_end.wrapping_sub(plan.www),
        path_start: parts.path_start - plan.www,
        query_start: moved.query_start,
        fragment_start: moved.fragment_start,
        len: moved.len,
        ..*parts
    }
}

/// Where what [`write`] wrote puts the parts that its edits move (the
/// others are `parts`' own, but for a `www.` cut's).
#[derive(Clone, Copy)]
struct Moved {
    query_start: u32,
    fragment_start: u32,
    len: u32,
}

/// [`write`] for a plan that does not change the query: only cuts (and
/// `trailing-slash=add`'s slash).
#[inline(always)]
fn write_cut(input: &[u8], parts: &Parts, plan: &Plan, out: &mut Vec<u8>) -> Moved {
    let pe = parts.path_end();
    let start = out.len();
    if plan.www > 0 {
        write_without_www(input, parts.host_start as usize, plan, out);
    } else if plan.path_cut == pe && !plan.slash {
        // Mostly a fragment removed: one copy.
        push_short(out, &input[..plan.end as usize]);
    } else {
        push_short(out, &input[..plan.path_cut as usize]);
    }
    if plan.slash {
        out.push(b'/');
    }
    if (plan.www > 0 || plan.path_cut < pe || plan.slash) && pe < plan.end {
        out.extend_from_slice(&input[pe as usize..plan.end as usize]);
    }
    // The bytes from the path's end on were copied as they were: their
    // offsets move by the change in length.
    let written = (out.len() - start) as u32;
    let delta = written.wrapping_sub(plan.end);
    let moved = |o: u32| {
        if o == ABSENT {
            o
        } else {
            o.wrapping_add(delta)
        }
    };
    Moved {
        query_start: moved(parts.query_start),
        fragment_start: if plan.end < parts.len {
            ABSENT
        } else {
            moved(parts.fragment_start)
        },
        len: written,
    }
}

/// Appends `input` up to the path's kept end (`plan.path_cut`) without
/// the `plan.www` bytes at the host's start `hs`. Both writers' first step
/// when `www` fired; inlined into each, as the code it replaces was.
#[inline(always)]
fn write_without_www(input: &[u8], hs: usize, plan: &Plan, out: &mut Vec<u8>) {
    // What comes before the host is `http://` or `https://` (`www` fires
    // on web URLs, and the fast path leaves userinfo to the parser): copied
    // as a length known here, a move or two, not a `memcpy` call.
    match hs {
        7 => out.extend_from_slice(&input[..7]),
        8 => out.extend_from_slice(&input[..8]),
        _ => out.extend_from_slice(&input[..hs]),
    }
    // Most hosts and paths are short: no `memcpy` call.
    push_short(out, &input[hs + plan.www as usize..plan.path_cut as usize]);
}

/// [`write`] for a plan that changes the query: what the query rules
/// wrote (`s.buf`), or nothing, in place of the query. Out of line: inlined,
/// it made the fused rules dearer for every URL. The plan by value: by
/// reference, it had to lie in memory for every URL, and was copied there
/// through the stack three times (about 14 instructions a URL the rules
/// change); a copy is made here for the few that take this call.
#[inline(never)]
fn write_query(input: &[u8], parts: &Parts, plan: Plan, s: &Scratch, out: &mut Vec<u8>) -> Moved {
    let start = out.len();
    let at = |out: &Vec<u8>| (out.len() - start) as u32;
    if plan.www > 0 {
        write_without_www(input, parts.host_start as usize, &plan, out);
    } else {
        out.extend_from_slice(&input[..plan.path_cut as usize]);
    }
    if plan.slash {
        out.push(b'/');
    }
    let query_start = match s.query {
        Outcome::New(k) => {
            let q = at(out);
            out.extend_from_slice(&s.buf[k as usize..]);
            q
        }
        Outcome::Gone | Outcome::Same => ABSENT,
    };
    // The fragment, unless it was cut.
    let query_end = parts.query_end();
    let fragment_start = if plan.end < parts.len || parts.fragment_start == ABSENT {
        ABSENT
    } else {
        at(out)
    };
    out.extend_from_slice(&input[query_end as usize..plan.end as usize]);
    Moved {
        query_start,
        fragment_start,
        len: at(out),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::super::{file, Edit};
    use crate::{Canonicalizer, Profile};

    /// A host section that no URL here has: it keeps a rule set from being
    /// fused and changes nothing else.
    const UNFUSED: &str = "[[host]]\nmatch = [\"never.invalid\"]\nrules = [\"-www\"]\n";

    /// The same rules twice, fused and in place.
    fn pair(profile: Profile, edits: &str) -> (Canonicalizer, Canonicalizer) {
        let mask = profile.rule_mask();
        let edits = Edit::parse_list(edits).unwrap();
        let make = |text| {
            let set = file::build(mask, text, &edits).unwrap();
            let mut c = Canonicalizer::new(profile).with_rules(Arc::new(set));
            c.set_keep_before_rules(true);
            c
        };
        (make(None), make(Some(UNFUSED)))
    }

    /// Hand-made URLs for every edit the fused rules make, and for what
    /// they leave to the in-place rules.
    const CASES: &[&str] = &[
        "http://www.example.com/a/index.html?x=1#top",
        "https://www2.example.co.uk/shuchao",
        "https://www.co.uk/a",
        "http://www.example.com./a",
        "http://example.com/a//b/",
        "http://example.com/a;jsessionid=1A/b?c=1",
        "http://example.com/Foo_(bar)",
        "http://example.com/(S(abcdefghijklmnopqrstuvwx))/a.aspx",
        "http://example.com/?utm_source=x",
        "http://example.com/?b=2&a=1",
        "http://example.com/?q=a+b",
        "http://example.com/?",
        "http://example.com/a.html#",
        "http://example.com/#x",
        "http://wwwexample.com/x",
        "http://www/x",
        "http://example.com:8080/dir/Default.aspx#f",
        "http://example.com/%c3%a9/x",
        "file:///a/b#c",
        "file:///a/index.html",
        "/a/index.html?x=1#f",
        "/shuchao",
        "/a//b;jsessionid=0?utm_medium=y",
        "/",
    ];

    /// Runs both on `input` (as a URL, and as a request target when it
    /// starts with `/`) and compares everything the caller can see.
    fn same(fused: &mut Canonicalizer, in_place: &mut Canonicalizer, input: &[u8], what: &str) {
        let target = input.first() == Some(&b'/');
        let run = |c: &mut Canonicalizer| {
            let mut out = b"prefix".to_vec();
            let r = if target {
                c.canonicalize_target(input, &mut out)
            } else {
                c.canonicalize_into(input, &mut out)
            };
            let before = c.before_rules().map(<[u8]>::to_vec);
            (r, out, before)
        };
        let a = run(fused);
        let b = run(in_place);
        assert_eq!(a, b, "{what}: {}", input.escape_ascii());
    }

    /// [`super::unchanged`] says `true` only where [`super::plan`] fires
    /// nothing and takes the URL: on the hand-made cases and the lists,
    /// and it says it for some of them (or it would test nothing).
    #[test]
    fn unchanged_only_where_the_plan_fires_nothing() {
        use super::super::apply::Scratch;
        use crate::url::fast::scan_canonical;
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/url-dataset");
        let mut lines: Vec<Vec<u8>> = CASES.iter().map(|c| c.as_bytes().to_vec()).collect();
        for f in ["kasztp", "userbait", "node_files", "isaacs_files"] {
            if let Ok(bytes) = std::fs::read(data.join(format!("{f}.txt"))) {
                lines.extend(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec));
            }
        }
        // `aggressive` reads the last segment: no quick way.
        assert!(!pair(Profile::Aggressive, "").0.fused_quick);
        let mut s = Scratch::default();
        for (profile, edits) in [
            // Without the last segment's rules (`quick` rule sets).
            (Profile::Safe, ""),
            (Profile::Aggressive, "-index-file,-trailing-slash"),
            (Profile::Safe, "-fragment,+www,+duplicate-slashes"),
        ] {
            let (fused, _) = pair(profile, edits);
            let set = fused.rules.as_ref().unwrap();
            assert!(super::quick(set) && fused.fused_quick, "{edits}");
            let cfg = set.global();
            let (mut said, mut with_query) = (0usize, 0usize);
            for l in &lines {
                let target = l.first() == Some(&b'/');
                let Some((parts, false, facts)) = scan_canonical(l, false, target) else {
                    continue;
                };
                if super::unchanged::<true>(cfg, l, &parts, facts) {
                    let what = format!("{} {edits}: {}", profile.name(), l.escape_ascii());
                    // Without `QUERY`, the same but for a web URL's query.
                    let web = parts.scheme_end == crate::url::parts::ABSENT || l[0] == b'h';
                    let query = parts.query_start != crate::url::parts::ABSENT;
                    let without = super::unchanged::<false>(cfg, l, &parts, facts);
                    assert_eq!(without, !(web && query), "{what}");
                    said += 1;
                    with_query += usize::from(web && query);
                    let plan = super::plan::<false>(cfg, l, &parts, facts, &mut s);
                    assert!(plan.is_some_and(|p| p.fired.is_empty()), "{what}");
                }
            }
            // Some with a query (`query::stays`), when the lists are there.
            assert!(said > 0, "{} {edits}", profile.name());
            assert!(with_query > 0 || lines.len() == CASES.len(), "{edits}");
        }
    }

    /// What `scan_canonical_kept` returns for a URL it does not keep is
    /// what `scan_canonical` returns (the quick way's URLs go on to the
    /// fused rules with it, not scanned again), and nothing is appended;
    /// one it keeps is appended whole.
    #[test]
    fn a_url_not_kept_comes_back_with_its_scan() {
        use crate::url::fast::{scan_canonical, scan_canonical_kept, Kept};
        let mut seen = [0usize; 3];
        // Lower-case hex digits are told with strict escapes only.
        for (l, strict) in CASES.iter().flat_map(|l| [(l, false), (l, true)]) {
            let l = l.as_bytes();
            let target = l.first() == Some(&b'/');
            let scanned = scan_canonical(l, strict, target);
            for keep in [false, true] {
                let mut out = b"prefix".to_vec();
                let got = scan_canonical_kept(l, strict, target, &mut out, |_, _| keep);
                let what = l.escape_ascii().to_string();
                match (got, scanned) {
                    (None, None) => assert_eq!(out, b"prefix", "{what}"),
                    (Some((parts, Kept::Yes)), Some((p, false, _))) => {
                        assert!(keep && parts == p, "{what}");
                        assert_eq!(out, [&b"prefix"[..], l].concat(), "{what}");
                        seen[0] += 1;
                    }
                    (Some((parts, Kept::No { lower_hex, facts })), Some(s)) => {
                        assert!(!keep || lower_hex, "{what}");
                        assert_eq!((parts, lower_hex, facts), s, "{what}");
                        assert_eq!(out, b"prefix", "{what}");
                        seen[1 + usize::from(lower_hex)] += 1;
                    }
                    (g, s) => panic!("{what}: {g:?} against {s:?}"),
                }
            }
        }
        // Kept, not kept, and not kept for its escapes' hex digits.
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    }

    #[test]
    fn fused_rules_write_what_the_in_place_rules_write() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/url-dataset");
        let mut lines: Vec<Vec<u8>> = CASES.iter().map(|c| c.as_bytes().to_vec()).collect();
        for f in ["kasztp", "userbait", "node_files", "isaacs_files"] {
            let Ok(bytes) = std::fs::read(data.join(format!("{f}.txt"))) else {
                eprintln!(
                    "{f}.txt not found in {}: hand-made cases only",
                    data.display()
                );
                continue;
            };
            for l in bytes.split(|&b| b == b'\n') {
                lines.push(l.to_vec());
                // The same as a request target: from the path on.
                let authority = l.windows(3).position(|w| w == b"://").map(|k| k + 3);
                if let Some(a) = authority {
                    if let Some(k) = l[a..].iter().position(|&b| b == b'/') {
                        lines.push(l[a + k..].to_vec());
                    }
                }
            }
        }
        let mut fired = 0usize;
        for (profile, edits) in [
            (Profile::Safe, ""),
            (Profile::Aggressive, ""),
            (Profile::Aggressive, "-www,trailing-slash=keep"),
            (Profile::Aggressive, "sort-query=key-value,-fragment"),
            (
                Profile::Safe,
                "+index-file,+trailing-slash,+duplicate-slashes",
            ),
        ] {
            let (mut fused, mut in_place) = pair(profile, edits);
            assert!(fused.fused && !in_place.fused, "{edits}");
            let what = format!("{} {edits}", profile.name());
            for l in &lines {
                same(&mut fused, &mut in_place, l, &what);
                fired += usize::from(fused.before_rules().is_some());
            }
        }
        // The comparison saw the rules fire.
        assert!(fired > 0);
        // Rules the fused way leaves to the in-place one.
        for edits in ["+lowercase-path", "+https-as-http", "trailing-slash=remove"] {
            let (fused, _) = pair(Profile::Aggressive, edits);
            assert!(!fused.fused, "{edits}");
        }
    }
}
