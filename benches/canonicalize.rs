//! Throughput of canonurl against its peers, side by side on the same URLs.
//!
//! One criterion group per input set, with `Throughput::ElementsAndBytes`
//! (URLs, and their total length), and these functions:
//!
//! - `canonurl/whatwg`, `canonurl/rfc3986`: `Canonicalizer::canonicalize_into`
//!   (strict WHATWG, no base: what the peers do), one canonicalizer and one
//!   output `Vec` reused, cleared per URL; `canonurl/safe` and
//!   `canonurl/aggressive` the same with the dedup profiles, whose cost is
//!   compared with `whatwg`'s after the run (issue 32's goals: at most 1.3×
//!   and 1.5×);
//! - `ada`: `ada_url::Url::parse(s, None)`, then `href()`;
//! - `url`: `url::Url::parse(s)` (rust-url), then `as_str()`;
//! - `urlnorm`: `url::Url::parse(s)`, then urlnorm's
//!   `UrlNormalizer::compute_normalization_string` (default options): a
//!   dedup key, not a URL (scheme and `www.` dropped, query sorted, tracking
//!   parameters removed), so it does more than the others;
//! - `baseline/copy`: split the same lines out of one buffer with memchr and
//!   copy each into a reused `Vec`: the floor for any line-at-a-time tool.
//!
//! Input sets (see `benches/common/mod.rs`): the lists
//! `url-dataset/{kasztp,node_files,userbait,isaacs_files}.txt`, and
//! `log_targets`, the request targets of every file of `logs-*/`, taken by
//! canonurl's own format detection and extractors, raw (not canonicalized),
//! origin-form ones prefixed with `http://example.com` so that every peer
//! gets the same absolute URLs. All under `../shared/data` (beside the crate)
//! or `$CANONURL_SHARED_DATA` (the `data` directory itself); without them,
//! `data/sample-urls.txt` and `data/sample-access.log` only, with a note.
//! Lines that are not UTF-8 are dropped once for all (the peers take `&str`).
//!
//! Before timing, each group checks that canonurl accepts as many URLs as ada,
//! so that it does not silently measure rejections. After the run, a table
//! (markdown, on stdout) gives per set and function the median ns per URL,
//! MB/s (10⁶ bytes of input URLs per second) and ada's time over that
//! function's, read back from criterion's `estimates.json` of this run.
//!
//! ```sh
//! cargo bench --bench canonicalize                 # all groups, then the table
//! cargo bench --bench canonicalize -- kasztp/      # one input set
//! ```

mod common;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use canonurl::{Canonicalizer, Profile};
use common::{UrlSet, LOG_SET, URL_SETS};
use criterion::{Criterion, Throughput};

/// Largest difference allowed between canonurl's and ada's accepted counts,
/// as a fraction of ada's (the two may follow slightly different spec versions).
const MAX_ACCEPT_DIFF: f64 = 0.001;

/// The functions of each group, in the order of the summary table.
const FUNCTIONS: &[&str] = &[
    "canonurl/whatwg",
    "canonurl/rfc3986",
    "canonurl/safe",
    "canonurl/aggressive",
    "ada",
    "url",
    "urlnorm",
    "baseline/copy",
];

fn count_canonurl(urls: &[&str], profile: Profile) -> usize {
    let mut c = Canonicalizer::new(profile);
    let mut out = Vec::new();
    urls.iter()
        .filter(|u| {
            out.clear();
            c.canonicalize_into(u.as_bytes(), &mut out).is_ok()
        })
        .count()
}

fn count_ada(urls: &[&str]) -> usize {
    urls.iter()
        .filter(|u| ada_url::Url::parse(**u, None).is_ok())
        .count()
}

fn count_url(urls: &[&str]) -> usize {
    urls.iter().filter(|u| url::Url::parse(u).is_ok()).count()
}

/// Checks, outside the timed loops, that the peers accept comparable numbers
/// of URLs, and says how many (urlnorm takes what `url` accepts).
fn check_accepted(set: &UrlSet, urls: &[&str]) {
    let whatwg = count_canonurl(urls, Profile::Whatwg);
    let rfc3986 = count_canonurl(urls, Profile::Rfc3986);
    let safe = count_canonurl(urls, Profile::Safe);
    let aggressive = count_canonurl(urls, Profile::Aggressive);
    let ada = count_ada(urls);
    let rust_url = count_url(urls);
    eprintln!(
        "{}: {} URLs ({} non-UTF-8 lines dropped), {} bytes, from {}; accepted: \
         canonurl/whatwg {whatwg}, canonurl/rfc3986 {rfc3986}, ada {ada}, url and urlnorm \
         {rust_url}",
        set.name,
        urls.len(),
        set.dropped,
        set.total_bytes(),
        set.origin,
    );
    assert!(
        whatwg == rfc3986 && whatwg == safe && whatwg == aggressive,
        "{}: the profiles must accept the same URLs",
        set.name
    );
    let diff = whatwg.abs_diff(ada) as f64;
    assert!(
        diff <= MAX_ACCEPT_DIFF * ada as f64,
        "{}: canonurl accepted {whatwg} URLs but ada {ada}: the bench would not compare like \
         with like",
        set.name
    );
}

fn bench_set(c: &mut Criterion, set: &UrlSet) {
    let urls = set.urls();
    check_accepted(set, &urls);

    let mut group = c.benchmark_group(&set.name);
    group.throughput(Throughput::ElementsAndBytes {
        elements: urls.len() as u64,
        bytes: set.total_bytes(),
    });

    for profile in [
        Profile::Whatwg,
        Profile::Rfc3986,
        Profile::Safe,
        Profile::Aggressive,
    ] {
        let mut canonicalizer = Canonicalizer::new(profile);
        let mut out = Vec::with_capacity(4096);
        group.bench_function(format!("canonurl/{}", profile.name()), |b| {
            b.iter(|| {
                let mut total = 0;
                for url in &urls {
                    out.clear();
                    if canonicalizer
                        .canonicalize_into(url.as_bytes(), &mut out)
                        .is_ok()
                    {
                        total += out.len();
                    }
                }
                black_box(total)
            })
        });
    }

    group.bench_function("ada", |b| {
        b.iter(|| {
            let mut total = 0;
            for url in &urls {
                if let Ok(parsed) = ada_url::Url::parse(*url, None) {
                    total += parsed.href().len();
                }
            }
            black_box(total)
        })
    });

    group.bench_function("url", |b| {
        b.iter(|| {
            let mut total = 0;
            for url in &urls {
                if let Ok(parsed) = url::Url::parse(url) {
                    total += parsed.as_str().len();
                }
            }
            black_box(total)
        })
    });

    let normalizer = urlnorm::UrlNormalizer::default();
    group.bench_function("urlnorm", |b| {
        b.iter(|| {
            let mut total = 0;
            for url in &urls {
                if let Ok(parsed) = url::Url::parse(url) {
                    total += normalizer.compute_normalization_string(&parsed).len();
                }
            }
            black_box(total)
        })
    });

    let mut out = Vec::with_capacity(4096);
    group.bench_function("baseline/copy", |b| {
        b.iter(|| {
            let text = set.text.as_bytes();
            let mut total = 0;
            let mut start = 0;
            for end in memchr::memchr_iter(b'\n', text) {
                out.clear();
                out.extend_from_slice(&text[start..end]);
                total += out.len();
                start = end + 1;
            }
            black_box(total)
        })
    });

    group.finish();
}

/// Where criterion writes its results, found as criterion does it
/// (`$CRITERION_HOME`, `$CARGO_TARGET_DIR/criterion`, `target/criterion`).
fn criterion_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(dir);
    }
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("criterion"),
        None => common::manifest().join("target/criterion"),
    }
}

/// The median time of one iteration in ns, from this run's `estimates.json`
/// (`None` when the function did not run this time: filtered out, or the
/// results are elsewhere).
fn median_ns(group: &str, function: &str, since: SystemTime) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
        .join(function.replace('/', "_"))
        .join("new/estimates.json");
    let fresh = std::fs::metadata(&path).ok()?.modified().ok()? >= since;
    if !fresh {
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

/// Prints the summary table of the functions that ran since `since`.
fn print_summary(sets: &[UrlSet], since: SystemTime) {
    let mut rows = Vec::new();
    for set in sets {
        let n = set.lines.len() as f64;
        let bytes = set.total_bytes() as f64;
        let ada = median_ns(&set.name, "ada", since);
        for &function in FUNCTIONS {
            let Some(ns) = median_ns(&set.name, function, since) else {
                continue;
            };
            let ratio = ada.map_or_else(|| "-".to_owned(), |a| format!("{:.2}×", a / ns));
            rows.push(format!(
                "| {} | {} | {:.1} | {:.0} | {ratio} |",
                set.name,
                function,
                ns / n,
                bytes / ns * 1e3,
            ));
        }
    }
    if rows.is_empty() {
        eprintln!(
            "note: no results of this run under {} for the summary table",
            criterion_dir().display()
        );
        return;
    }
    println!("\nmedian per URL (criterion), MB = 10^6 bytes of input URLs:\n");
    for set in sets {
        let Some(w) = median_ns(&set.name, "canonurl/whatwg", since) else {
            continue;
        };
        for (profile, goal) in [("safe", 1.3), ("aggressive", 1.5)] {
            if let Some(t) = median_ns(&set.name, &format!("canonurl/{profile}"), since) {
                println!(
                    "{}: {profile} takes {:.2}× whatwg's time per URL (goal: at most {goal}×)",
                    set.name,
                    t / w
                );
            }
        }
    }
    println!();
    println!("| set | function | ns/URL | MB/s | ada time / this |");
    println!("|---|---|---:|---:|---:|");
    for row in rows {
        println!("{row}");
    }
}

fn main() {
    let started = SystemTime::now();
    let mut names = URL_SETS.to_vec();
    names.push(LOG_SET);
    let sets = common::sets(&names);
    // Small enough for a 2-core machine: about 4 s per function, 8
    // functions per set.
    let mut criterion = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    for set in &sets {
        bench_set(&mut criterion, set);
    }
    criterion.final_summary();
    print_summary(&sets, started);
}
