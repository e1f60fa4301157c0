//! SURT and SSURT test data from iipc/urlcanon (see shared/data/SOURCES.md):
//! `ssurt.json` and `surt.json`, each an object of groups, each group an
//! object mapping an input to the expected output.
//!
//! URL groups are read through the URL Standard (`whatwg` profile) first and
//! then written in the group's form by `canonurl::canon::surt`; host groups
//! call `reverse_host` / `ssurt_host` directly. urlcanon writes a URL as it
//! parsed it, without canonicalizing, so where the URL Standard changes the
//! URL the outputs differ for that reason alone: those cases are listed in
//! [`DIFFERENCES`], each with a check that the difference is exactly the one
//! its reason names. Every other case must match, and every listed case must
//! still differ, so the list cannot go stale.
//!
//! Groups that are not a SURT spelling (surt.json is mostly IA
//! canonicalization cases) are listed in [`OTHER_GROUPS`]; a group in neither
//! list fails the test, so that new data is not silently ignored.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use canonurl::canon::surt::{reverse_host, ssurt, ssurt_host, surt, SurtForm};
use canonurl::{Canonicalizer, Profile};
use common::{read_json, shared_data_or_skip, show};

/// What a group's cases exercise.
#[derive(Clone, Copy, Debug)]
enum Run {
    Surt(SurtForm),
    Ssurt,
    ReverseHost,
    SsurtHost,
}

/// The groups that are SURT spellings.
const GROUPS: &[(&str, Run)] = &[
    ("surt", Run::Surt(SurtForm::Classic)),
    (
        "surtWithoutScheme",
        Run::Surt(SurtForm::ClassicWithoutScheme),
    ),
    (
        "surtWithoutTrailingComma",
        Run::Surt(SurtForm::ClassicWithoutTrailingComma),
    ),
    ("ssurt", Run::Ssurt),
    ("reverseHost", Run::ReverseHost),
    ("ssurtHost", Run::SsurtHost),
];

/// Groups that are read but not run here, and why.
const OTHER_GROUPS: &[(&str, &str)] = &[
    (
        "defaultIASurt",
        "the CDX key after IA canonicalization (www removal, query sorting, \
         session ids, lower-casing): tested with those rules",
    ),
    (
        "Canonicalizer.DefaultIA",
        "IA canonicalization, not a SURT form",
    ),
    ("Canonicalizer.IA", "IA canonicalization, not a SURT form"),
    (
        "google",
        "Google Safe Browsing canonicalization, not a SURT form",
    ),
    (
        "googleSupplementalFromSurt",
        "Google-style canonicalization, not a SURT form",
    ),
    (
        "unescapeRepeatedly",
        "an unescaping helper, not a SURT form",
    ),
    ("alphaRorderQuery", "query sorting, not a SURT form"),
    ("massageHost", "www removal, not a SURT form"),
    ("stripPathSessionId", "session-id removal, not a SURT form"),
];

/// Why a listed case differs from urlcanon.
#[derive(Clone, Copy, Debug)]
enum Why {
    /// urlcanon keeps the empty path of `http://host`; the URL Standard's
    /// serializer writes `/` (a special URL's path is never empty), so the
    /// SURT has `)/` where urlcanon's has `)`.
    SlashPath,
}

impl Why {
    fn reason(self) -> &'static str {
        match self {
            Why::SlashPath => "WHATWG gives http URLs a `/` path",
        }
    }

    /// Whether `got` differs from `expected` exactly as the reason says.
    fn explains(self, expected: &str, got: &str) -> bool {
        match self {
            Why::SlashPath => expected
                .find(')')
                .is_some_and(|i| got == format!("{})/{}", &expected[..i], &expected[i + 1..])),
        }
    }
}

/// The cases that differ from urlcanon on purpose: (group, input, why).
const DIFFERENCES: &[(&str, &str, Why)] = &[
    (
        "surt",
        "http://user:pass@foo.example.org:81",
        Why::SlashPath,
    ),
    (
        "surt",
        "http://user:pass@foo.example.org:81?query",
        Why::SlashPath,
    ),
    (
        "surt",
        "http://user:pass@foo.example.org:81#frag",
        Why::SlashPath,
    ),
    ("surt", "http://user:pass@10.1.2.3:81#frag", Why::SlashPath),
    (
        "surtWithoutScheme",
        "http://user:pass@foo.example.org:81",
        Why::SlashPath,
    ),
    (
        "surtWithoutScheme",
        "http://user:pass@foo.example.org:81?query",
        Why::SlashPath,
    ),
    (
        "surtWithoutScheme",
        "http://user:pass@foo.example.org:81#frag",
        Why::SlashPath,
    ),
    (
        "surtWithoutScheme",
        "http://user:pass@10.1.2.3:81#frag",
        Why::SlashPath,
    ),
    (
        "surtWithoutTrailingComma",
        "http://user:pass@foo.example.org:81",
        Why::SlashPath,
    ),
    (
        "surtWithoutTrailingComma",
        "http://user:pass@foo.example.org:81?query",
        Why::SlashPath,
    ),
    (
        "surtWithoutTrailingComma",
        "http://user:pass@foo.example.org:81#frag",
        Why::SlashPath,
    ),
];

/// Counts and problems over all files.
#[derive(Default)]
struct Tally {
    passed: usize,
    failures: Vec<String>,
    /// (group, input) of every listed case that was seen.
    seen_listed: BTreeSet<(String, String)>,
    groups_seen: BTreeSet<String>,
}

fn produce(c: &mut Canonicalizer, run: Run, input: &str, out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    match run {
        Run::ReverseHost => reverse_host(input.as_bytes(), out),
        Run::SsurtHost => ssurt_host(input.as_bytes(), out),
        Run::Surt(_) | Run::Ssurt => {
            let mut url = Vec::new();
            let canonical = c
                .canonicalize_into(input.as_bytes(), &mut url)
                .map_err(|r| format!("rejected ({r})"))?;
            match run {
                Run::Surt(form) => surt(&url, &canonical.parts, form, out),
                _ => ssurt(&url, &canonical.parts, out),
            }
        }
    }
    Ok(())
}

/// Runs every group of `file` and prints its summary line.
fn run_file(data: &Path, file: &str, tally: &mut Tally) {
    let (json, _) = read_json(&data.join("urlcanon").join(file));
    let groups = json
        .as_object()
        .unwrap_or_else(|| panic!("{file} is not an object of groups"));
    let mut c = Canonicalizer::new(Profile::Whatwg);
    let mut out = Vec::new();
    let (mut passed, mut listed) = (0, 0);
    let mut skipped = Vec::new();
    for (group, cases) in groups {
        tally.groups_seen.insert(group.clone());
        let Some(&(_, run)) = GROUPS.iter().find(|(g, _)| g == group) else {
            if OTHER_GROUPS.iter().any(|(g, _)| g == group) {
                skipped.push(group.as_str());
            } else {
                tally.failures.push(format!(
                    "{file}: group {group:?} is neither run nor listed as out of scope"
                ));
            }
            continue;
        };
        let cases = cases
            .as_object()
            .unwrap_or_else(|| panic!("{file}: group {group:?} is not an object"));
        for (input, expected) in cases {
            let expected = expected
                .as_str()
                .unwrap_or_else(|| panic!("{file}: {group}: {input:?}: value is not a string"));
            let got = produce(&mut c, run, input, &mut out)
                .map(|()| String::from_utf8_lossy(&out).into_owned());
            let why = DIFFERENCES
                .iter()
                .find(|(g, i, _)| g == group && i == input)
                .map(|&(_, _, why)| why);
            let case = format!("{file}: {group}: {input:?}");
            match (why, got) {
                (_, Err(e)) => tally.failures.push(format!("{case}: {e}")),
                (None, Ok(got)) if got == expected => passed += 1,
                (None, Ok(got)) => tally.failures.push(format!(
                    "{case}: expected {expected:?}, got {}",
                    show(got.as_bytes())
                )),
                (Some(why), Ok(got)) => {
                    tally.seen_listed.insert((group.clone(), input.clone()));
                    if got == expected {
                        tally.failures.push(format!(
                            "{case}: listed as differing ({}) but passes; remove it from DIFFERENCES",
                            why.reason()
                        ));
                    } else if !why.explains(expected, &got) {
                        tally.failures.push(format!(
                            "{case}: listed as differing ({}) but the difference is another: expected {expected:?}, got {got:?}",
                            why.reason()
                        ));
                    } else {
                        listed += 1;
                    }
                }
            }
        }
    }
    tally.passed += passed;
    println!("{file}: {passed} passed, {listed} listed differences");
    if !skipped.is_empty() {
        println!(
            "  groups not run here (see OTHER_GROUPS): {}",
            skipped.join(", ")
        );
    }
}

#[test]
fn urlcanon_surt() {
    let Some(data) = shared_data_or_skip("urlcanon_surt") else {
        return;
    };
    let mut tally = Tally::default();
    for file in ["surt.json", "ssurt.json"] {
        run_file(&data, file, &mut tally);
    }
    for (group, input, why) in DIFFERENCES {
        if !tally
            .seen_listed
            .contains(&(group.to_string(), input.to_string()))
        {
            tally.failures.push(format!(
                "{group}: {input:?} is listed as differing ({}) but is not in the data",
                why.reason()
            ));
        }
    }
    for (group, _) in GROUPS {
        if !tally.groups_seen.contains(*group) {
            tally
                .failures
                .push(format!("group {group:?} is not in the data"));
        }
    }
    for (group, _) in OTHER_GROUPS {
        if !tally.groups_seen.contains(*group) {
            tally.failures.push(format!(
                "out-of-scope group {group:?} is not in the data any more"
            ));
        }
    }
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, _, why) in DIFFERENCES {
        *reasons.entry(why.reason()).or_default() += 1;
    }
    for (reason, n) in reasons {
        println!("  {n} listed: {reason}");
    }
    for f in &tally.failures {
        println!("  {f}");
    }
    assert!(tally.passed >= 20, "only {} cases passed", tally.passed);
    assert!(
        tally.failures.is_empty(),
        "{} surt/ssurt failure(s):\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
}
