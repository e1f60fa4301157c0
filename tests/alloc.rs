//! Once its buffers are warm, a `Canonicalizer` makes no heap allocation per
//! URL. A counting global allocator (its own test binary) checks this over a
//! real URL list, in both profiles.

use crate::common;
use crate::counting;

use std::sync::Arc;

use canonurl::canon::rules::{file, Edit, Rule};
use canonurl::{Canonicalizer, Profile};
use common::{read_lines, shared_data_or_skip};
use counting::count_allocations;

/// Whether the line's host may need the IDNA slow path, which is allowed to
/// allocate: any non-ASCII byte (raw, or escaped as `%80`-`%FF`, since a
/// special URL's host is percent-decoded first) or an `xn--` label. Without a
/// parser at hand this looks at the whole line, which only skips more.
fn may_need_idna(line: &[u8]) -> bool {
    !line.is_ascii()
        || line.windows(4).any(|w| w.eq_ignore_ascii_case(b"xn--"))
        || line
            .windows(2)
            .any(|w| w[0] == b'%' && matches!(w[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
}

/// Rules that fire often on kasztp.txt: a regex rewrite with groups, a
/// literal one, a whole-URL one with an id, state, default, kept and
/// dropped parameters, for every host, per host and per path prefix, and
/// host aliases (to a host, and to a host and path prefix).
const RULES_FILE: &str = r#"
state-params = ["ref"]
defaults = { page = "1" }
drop-params = ["lang", "s*"]
rewrite = [
  { regex = '/(\d+)/', replace = '/n$1/' },
  { literal = "/en/", replace = "/" },
  { regex = '^(https?)://news\.cnet\.com/', replace = '$1://cnet.com/news/', scope = "url", id = "cnet" },
]
host-aliases = [
  ["tools.ietf.org", "ietf.org/tools/"],
  ["members.tripod.com/", "tripod.com/members/"],
  ["www.angelfire.com", "angelfire.example"],
]

[[path]]
prefix = "/hub"
keep-params = ["id", "p*"]

[[host]]
match = ["*.com", "*.org"]
keep-position = ["id", "q"]
rewrite = [{ regex = '(?i)\.html?$', replace = '' }]

[[host.path]]
prefix = "/wiki/"
keep-params = ["title", "oldid"]
defaults = { action = "view" }
drop-params = ["printable"]
"#;

/// Settings that keep one configuration for every URL (no section, alias
/// or rewrite): the rules then run fused with the fast path
/// (`src/canon/rules/fused.rs`).
const LISTS_FILE: &str = r#"
sort-query = "key-value"
extra-index-files = ["home.html", "Main.aspx"]
extra-tracking-params = ["ref_src", "sr_*"]
extra-session-params = ["sess"]
state-params = ["ref"]
drop-params = ["lang", "s*"]
defaults = { page = "1" }
"#;

#[test]
fn no_allocation_per_url_once_warm() {
    let Some(data) = shared_data_or_skip("no_allocation_per_url_once_warm") else {
        return;
    };
    // Everything is read into memory before counting starts.
    let all = read_lines(&data.join("url-dataset/kasztp.txt"));
    let mut lines: Vec<&[u8]> = all
        .iter()
        .map(Vec::as_slice)
        .filter(|l| !may_need_idna(l))
        .collect();
    let skipped = all.len() - lines.len();
    // kasztp.txt is all `https`: every tenth line again as `http`, for
    // `http-as-https`.
    let http: Vec<Vec<u8>> = lines
        .iter()
        .step_by(10)
        .filter_map(|l| l.strip_prefix(b"https://"))
        .map(|rest| [&b"http://"[..], rest].concat())
        .collect();
    lines.extend(http.iter().map(Vec::as_slice));
    println!(
        "alloc: {} lines used, {} of them as http ({} of {} kasztp lines skipped: host may need IDNA)",
        lines.len(),
        http.len(),
        skipped,
        all.len()
    );
    assert!(lines.len() > 1000, "too few lines left: {}", lines.len());

    // Every profile, and `aggressive` with every opt-in rule, host sections
    // and regex rewrites that fire on many URLs (each fired rewrite parses
    // the URL again).
    let rules = file::build(
        Profile::Aggressive.rule_mask(),
        Some(RULES_FILE),
        &Edit::parse_list("+lowercase-path,+https-as-http,sort-query=key-value").unwrap(),
    )
    .unwrap();
    // The same with http-as-https (which excludes https-as-http).
    let https = file::build(
        Profile::Aggressive.rule_mask(),
        Some(RULES_FILE),
        &Edit::parse_list("+http-as-https").unwrap(),
    )
    .unwrap();
    let mut canonicalizers: Vec<(String, Canonicalizer)> = Profile::ALL
        .iter()
        .map(|p| (p.name().to_string(), Canonicalizer::new(*p)))
        .collect();
    canonicalizers.push((
        "aggressive+rules file".into(),
        Canonicalizer::new(Profile::Aggressive).with_rules(Arc::new(rules)),
    ));
    canonicalizers.push((
        "aggressive+http-as-https+rules file".into(),
        Canonicalizer::new(Profile::Aggressive).with_rules(Arc::new(https)),
    ));
    // Every tier with the rules file.
    let safe = file::build(Profile::Safe.rule_mask(), Some(RULES_FILE), &[]).unwrap();
    canonicalizers.push((
        "safe+rules file".into(),
        Canonicalizer::new(Profile::Safe).with_rules(Arc::new(safe)),
    ));
    // The fused rules with lists of their own, keeping each URL's form
    // before the rules (as statistics ask for it).
    let lists = file::build(Profile::Aggressive.rule_mask(), Some(LISTS_FILE), &[]).unwrap();
    let mut fused = Canonicalizer::new(Profile::Aggressive).with_rules(Arc::new(lists));
    fused.set_keep_before_rules(true);
    canonicalizers.push(("aggressive+lists".into(), fused));
    for (name, mut c) in canonicalizers {
        let mut out = Vec::new();
        let mut accepted = 0usize;
        // URLs on which some rule fired, on which a rewrite fired, and on
        // which each rule of the rules file's new keys fired.
        let scoped = [
            Rule::KeepParams,
            Rule::DropParams,
            Rule::HostAlias,
            Rule::HttpAsHttps,
        ];
        let mut fired = [0usize; 6];
        let mut pass = |accepted: &mut usize, fired: &mut [usize; 6]| {
            for line in &lines {
                out.clear();
                if let Ok(r) = c.canonicalize_into(line, &mut out) {
                    *accepted += 1;
                    fired[0] += usize::from(!r.fired.is_empty());
                    fired[1] += usize::from(r.fired.has(Rule::Rewrite));
                    for (n, rule) in fired[2..].iter_mut().zip(scoped) {
                        *n += usize::from(r.fired.has(rule));
                    }
                }
            }
        };
        pass(&mut accepted, &mut fired); // warm-up: buffers grow to the largest URL
        let warm_accepted = accepted;
        accepted = 0;
        fired = [0; 6];
        let allocations = count_allocations(|| pass(&mut accepted, &mut fired));
        println!(
            "alloc ({name}): {allocations} allocation(s) in the second pass over {} lines ({accepted} accepted, rules fired on {}, rewrites on {}, keep-params/drop-params/host-alias/http-as-https on {:?})",
            lines.len(), fired[0], fired[1], &fired[2..]
        );
        if name.starts_with("aggressive") || name == "safe" {
            assert!(
                fired[0] > 100,
                "{name}: rules fired on only {} URLs",
                fired[0]
            );
        }
        if name.contains("rules file") {
            assert!(
                fired[1] > 1000,
                "{name}: rewrites fired on only {} URLs",
                fired[1]
            );
            // Every new key is exercised (http-as-https in its run).
            for (n, rule) in fired[2..].iter().zip(scoped) {
                let expected = rule != Rule::HttpAsHttps || name.contains("http-as-https");
                assert!(
                    !expected || *n > 10,
                    "{name}: {rule} fired on only {n} URLs"
                );
            }
        }
        assert_eq!(accepted, warm_accepted, "the two passes disagree");
        // Without accepted URLs the check would be vacuous.
        assert!(accepted * 2 > lines.len(), "only {accepted} lines accepted");
        assert_eq!(allocations, 0, "{name} allocated once warm");
    }
}

#[test]
fn the_counter_counts() {
    let n = count_allocations(|| {
        let v: Vec<u8> = Vec::with_capacity(64);
        std::hint::black_box(&v);
    });
    assert_eq!(n, 1);
}
