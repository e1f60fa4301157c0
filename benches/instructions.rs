//! Instructions per URL, counted by callgrind through gungraun: canonurl
//! (each profile), ada-url and url on the same URLs. Unlike times, these do
//! not depend on what else the machine is doing.
//!
//! Each benchmark canonicalizes exactly [`N`] URLs, so **instructions per
//! URL = the `Instructions` figure / 10,000**. The URLs are read and
//! picked in the setup function (`load`), which gungraun runs outside the
//! measurement, and returned by each benchmark so that freeing them is not
//! counted either. `baseline_copy` copies each URL into a reused buffer: the
//! loop and a copy, for reference (not subtracted).
//!
//! Inputs (see `benches/common/mod.rs`): `kasztp` (https URLs of real sites)
//! and `node_files` (`file://` URLs) from `url-dataset/`, and `log_targets`
//! (the request targets of every shared log, origin-form ones prefixed with
//! `http://example.com`), each sampled evenly down to [`N`] URLs. Without the
//! shared data, the crate's samples stand in (repeated up to [`N`]), with a
//! note on stderr (shown with `--nocapture`).
//!
//! Needs valgrind and the gungraun-runner of the same version as the
//! `gungraun` dev-dependency:
//!
//! ```sh
//! benches/install-gungraun-runner.sh     # once: cargo install --locked gungraun-runner
//! cargo bench --bench instructions
//! ```

mod common;

use std::hint::black_box;

use canonurl::{Canonicalizer, Profile};
use common::LOG_SET;
use gungraun::{library_benchmark, library_benchmark_group, main, LibraryBenchmarkConfig};

/// URLs per benchmark: divide the instruction counts by this.
const N: usize = 10_000;

/// The setup: [`N`] URLs of the input set `name`, spread evenly over it.
fn load(name: &str) -> Vec<String> {
    let mut sets = common::sets(&[name]);
    // Without the shared data, `sets` is the two samples: URLs, then a log.
    let set = sets.swap_remove(if name == LOG_SET { sets.len() - 1 } else { 0 });
    if set.name != name {
        eprintln!("note: {name} not found, measuring {} instead", set.name);
    }
    let len = set.lines.len();
    assert!(len > 0, "{}: no URLs", set.name);
    (0..N)
        .map(|i| {
            // Every len/N-th URL, or the list over again when it is short.
            let (s, e) = set.lines[if len >= N { i * len / N } else { i % len }];
            set.text[s..e].to_owned()
        })
        .collect()
}

/// Canonicalizes every URL with `profile`; returns the total length of
/// the results, and the URLs (dropped by the caller, outside the measurement).
fn canonurl(urls: Vec<String>, profile: Profile) -> (usize, Vec<String>) {
    let mut c = Canonicalizer::new(profile);
    let mut out = Vec::with_capacity(4096);
    let mut total = 0;
    for url in &urls {
        out.clear();
        if c.canonicalize_into(black_box(url.as_bytes()), &mut out)
            .is_ok()
        {
            total += black_box(out.len());
        }
    }
    (total, urls)
}

#[library_benchmark]
#[bench::kasztp(args = ("kasztp"), setup = load)]
#[bench::node_files(args = ("node_files"), setup = load)]
#[bench::log_targets(args = (LOG_SET), setup = load)]
fn canonurl_whatwg(urls: Vec<String>) -> (usize, Vec<String>) {
    canonurl(urls, Profile::Whatwg)
}

#[library_benchmark]
#[bench::kasztp(args = ("kasztp"), setup = load)]
#[bench::node_files(args = ("node_files"), setup = load)]
#[bench::log_targets(args = (LOG_SET), setup = load)]
fn canonurl_rfc3986(urls: Vec<String>) -> (usize, Vec<String>) {
    canonurl(urls, Profile::Rfc3986)
}

#[library_benchmark]
#[bench::kasztp(args = ("kasztp"), setup = load)]
#[bench::node_files(args = ("node_files"), setup = load)]
#[bench::log_targets(args = (LOG_SET), setup = load)]
fn canonurl_safe(urls: Vec<String>) -> (usize, Vec<String>) {
    canonurl(urls, Profile::Safe)
}

#[library_benchmark]
#[bench::kasztp(args = ("kasztp"), setup = load)]
#[bench::node_files(args = ("node_files"), setup = load)]
#[bench::log_targets(args = (LOG_SET), setup = load)]
fn canonurl_aggressive(urls: Vec<String>) -> (usize, Vec<String>) {
    canonurl(urls, Profile::Aggressive)
}

#[library_benchmark]
#[bench::kasztp(args = ("kasztp"), setup = load)]
#[bench::node_files(args = ("node_files"), setup = load)]
#[bench::log_targets(args = (LOG_SET), setup = load)]
fn ada(urls: Vec<String>) -> (usize, Vec<String>) {
    let mut total = 0;
    for url in &urls {
        if let Ok(parsed) = ada_url::Url::parse(black_box(url.as_str()), None) {
            total += black_box(parsed.href().len());
        }
    }
    (total, urls)
}

#[library_benchmark]
#[bench::kasztp(args = ("kasztp"), setup = load)]
#[bench::node_files(args = ("node_files"), setup = load)]
#[bench::log_targets(args = (LOG_SET), setup = load)]
fn url(urls: Vec<String>) -> (usize, Vec<String>) {
    let mut total = 0;
    for url in &urls {
        if let Ok(parsed) = ::url::Url::parse(black_box(url)) {
            total += black_box(parsed.as_str().len());
        }
    }
    (total, urls)
}

#[library_benchmark]
#[bench::kasztp(args = ("kasztp"), setup = load)]
#[bench::node_files(args = ("node_files"), setup = load)]
#[bench::log_targets(args = (LOG_SET), setup = load)]
fn baseline_copy(urls: Vec<String>) -> (usize, Vec<String>) {
    let mut out = Vec::with_capacity(4096);
    let mut total = 0;
    for url in &urls {
        out.clear();
        out.extend_from_slice(black_box(url.as_bytes()));
        total += black_box(out.len());
    }
    (total, urls)
}

library_benchmark_group!(
    name = peers,
    // Within an input (same bench id), every function is compared with the others.
    compare_by_id = true,
    benchmarks = [
        canonurl_whatwg,
        canonurl_rfc3986,
        canonurl_safe,
        canonurl_aggressive,
        ada,
        url,
        baseline_copy
    ]
);

main!(
    // gungraun clears the environment of the benchmarks: keep the data override.
    config = LibraryBenchmarkConfig::default().pass_through_env("CANONURL_SHARED_DATA"),
    library_benchmark_groups = peers
);
