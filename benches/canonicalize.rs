//! Throughput of canonurl against its peers, side by side on the same URLs.
//!
//! One criterion group per data set, `Throughput::Bytes` = the total length
//! of its URLs, with these functions:
//!
//! - `canonurl/whatwg`, `canonurl/rfc3986`: `Canonicalizer::canonicalize_into`
//!   (strict WHATWG, no base: what the peers do), one canonicalizer and one
//!   output `Vec` reused, cleared per URL;
//! - `ada`: `ada_url::Url::parse(s, None)`, then `href()`;
//! - `url`: `url::Url::parse(s)` (rust-url), then `as_str()`;
//! - `baseline/copy`: split the same lines out of one buffer with memchr and
//!   copy each into a reused `Vec`: the floor for any line-at-a-time tool.
//!
//! Data: `url-dataset/{kasztp,node_files,userbait,isaacs_files}.txt` under
//! `../shared/data` (beside the crate), or under `$CANONURL_SHARED_DATA` (the
//! `data` directory itself). Without them, `data/sample-urls.txt` only.
//! Lines that are not UTF-8 are dropped once for all (the peers take `&str`).
//!
//! Before timing, each group checks that canonurl accepts as many URLs as ada,
//! so that it does not silently measure rejections.
//!
//! ```sh
//! cargo bench --bench canonicalize                 # all groups
//! cargo bench --bench canonicalize -- kasztp/      # one data set
//! ```

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use canonurl::{Canonicalizer, Profile};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// The shared data sets, in `url-dataset/`.
const SHARED_SETS: &[&str] = &["kasztp", "node_files", "userbait", "isaacs_files"];

/// Largest difference allowed between canonurl's and ada's accepted counts,
/// as a fraction of ada's (the two may follow slightly different spec versions).
const MAX_ACCEPT_DIFF: f64 = 0.001;

/// One data set: its UTF-8 lines, joined by `\n` (for the baseline), and
/// pre-split (for everyone else).
struct Dataset {
    name: String,
    text: String,
    /// Byte ranges of the lines in `text`.
    lines: Vec<(usize, usize)>,
    /// Lines dropped because they are not UTF-8.
    dropped: usize,
}

impl Dataset {
    /// Reads `path`: one URL per line, `\n` or `\r\n`; a last line without
    /// `\n` counts.
    fn load(name: &str, path: &Path) -> Dataset {
        let bytes =
            std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let mut text = String::with_capacity(bytes.len());
        let mut lines = Vec::new();
        let mut dropped = 0;
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        for line in body.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            match std::str::from_utf8(line) {
                Ok(s) => {
                    let start = text.len();
                    text.push_str(s);
                    lines.push((start, text.len()));
                    text.push('\n');
                }
                Err(_) => dropped += 1,
            }
        }
        Dataset {
            name: name.to_owned(),
            text,
            lines,
            dropped,
        }
    }

    fn urls(&self) -> Vec<&str> {
        self.lines.iter().map(|&(s, e)| &self.text[s..e]).collect()
    }

    fn total_bytes(&self) -> u64 {
        self.lines.iter().map(|&(s, e)| (e - s) as u64).sum()
    }
}

/// The data sets to run: the shared ones if present, else the sample.
fn datasets() -> Vec<Dataset> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = match std::env::var_os("CANONURL_SHARED_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => manifest.join("../shared/data"),
    };
    let dir = shared.join("url-dataset");
    let mut sets = Vec::new();
    for name in SHARED_SETS {
        let path = dir.join(format!("{name}.txt"));
        if path.is_file() {
            sets.push(Dataset::load(name, &path));
        } else {
            eprintln!("note: {} not found, skipped", path.display());
        }
    }
    if sets.is_empty() {
        eprintln!(
            "note: no shared data sets under {} (set CANONURL_SHARED_DATA to the shared \
             `data` directory); benchmarking data/sample-urls.txt only",
            dir.display()
        );
        sets.push(Dataset::load(
            "sample",
            &manifest.join("data/sample-urls.txt"),
        ));
    }
    sets
}

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
/// of URLs, and says how many.
fn check_accepted(set: &Dataset, urls: &[&str]) {
    let whatwg = count_canonurl(urls, Profile::Whatwg);
    let rfc3986 = count_canonurl(urls, Profile::Rfc3986);
    let ada = count_ada(urls);
    let rust_url = count_url(urls);
    eprintln!(
        "{}: {} URLs ({} non-UTF-8 lines dropped), {} bytes; accepted: canonurl/whatwg {whatwg}, \
         canonurl/rfc3986 {rfc3986}, ada {ada}, url {rust_url}",
        set.name,
        urls.len(),
        set.dropped,
        set.total_bytes(),
    );
    assert_eq!(
        whatwg, rfc3986,
        "{}: both profiles must accept the same URLs",
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

fn bench_dataset(c: &mut Criterion, set: &Dataset) {
    let urls = set.urls();
    check_accepted(set, &urls);

    let mut group = c.benchmark_group(&set.name);
    group.throughput(Throughput::Bytes(set.total_bytes()));

    for profile in [Profile::Whatwg, Profile::Rfc3986] {
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

fn benches(c: &mut Criterion) {
    for set in datasets() {
        bench_dataset(c, &set);
    }
}

criterion_group! {
    name = canonicalize;
    // Small enough for a 2-core CI machine: about 4 s per function.
    config = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(canonicalize);
