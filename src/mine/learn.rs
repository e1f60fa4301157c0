//! From a sorted summary file to decided rules: the learning/confirming
//! split by time, one host at a time, then host aliases across hosts
//! (docs/mine.md, stages 1–3).
//!
//! Memory: one host's URLs at a time for the families within a host, plus a
//! compact print of every URL (its target, hits and two sides) for host
//! aliases, which compare hosts with each other.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, Seek, SeekFrom, Write};

use super::candidates::{
    from_hints, grouping_key, propose, propose_redirects, push_grouping_key, Family, HintPair,
    Rule, UrlEntry,
};
use super::evidence::{
    agrees, keep_windows, mark_popular, page_signature, redirect_verdict, rejection, verdict, Part,
    Side, Tally, Thresholds, WindowSize,
};
use super::hints::Hints;
use super::summary::{Key, UrlSummary};
use super::table::{self, for_each_row_in, read_head, Owned, RowForm, SummaryTable, Values};
use super::{MergeError, MineError};
use xxhash_rust::xxh64::xxh64;

/// What was decided about a candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Supported when learned and confirmed on the later part: written active.
    Accepted,
    /// Supported when learned, not confirmed enough (why): written commented out.
    Unverified(String),
    /// Not supported (why): only in the evidence file.
    Rejected(String),
}

/// A candidate with its evidence and decision.
#[derive(Debug)]
pub(crate) struct Finding {
    /// `m-<family>-<n>`, unique in the output.
    pub id: String,
    /// The host's section (`""`: the top level, for path-only logs and aliases).
    pub host: String,
    pub rule: Rule,
    pub decision: Decision,
    pub proposals: u64,
    /// Redirects clients followed at once that say this rule (`hints.rs`).
    pub redirects: u64,
    pub learn: Tally,
    pub confirm: Tally,
}

/// How mining is run.
#[derive(Clone, Debug)]
pub struct MineOptions {
    /// When a candidate is accepted.
    pub thresholds: Thresholds,
    /// The fraction of the log's time span (earliest first) learned on, two
    /// thirds by default; the windows of the rest confirm. 1.0: no confirmation (rules are written active on the
    /// learning evidence alone).
    pub learn: f64,
}

impl Default for MineOptions {
    fn default() -> MineOptions {
        MineOptions {
            thresholds: Thresholds::default(),
            learn: 2.0 / 3.0,
        }
    }
}

/// Counts of what mining saw and decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MineReport {
    /// Hosts mined (the empty host of path-only URLs included).
    pub hosts: u64,
    /// Distinct URLs mined.
    pub urls: u64,
    /// The window sizes were compared in, in seconds (the summary's own, or
    /// coarser when its windows are finer than the log needs).
    pub window_seconds: u64,
    /// Windows learned on.
    pub learn_windows: u64,
    /// Windows confirmed on.
    pub confirm_windows: u64,
    /// Rules written active.
    pub accepted: u64,
    /// Rules written commented out (learned, not confirmed).
    pub unverified: u64,
    /// Candidates only in the evidence file.
    pub rejected: u64,
    /// Groups of URLs sharing one run of digits too large to form pairs (over `--bucket-cap`).
    pub skipped_buckets: u64,
    /// Candidates dropped over `--max-candidates`.
    pub dropped_candidates: u64,
    /// URLs left out of their host's mining to stay within `--memory`.
    pub sampled_urls: u64,
    /// URLs left out of the host-alias comparison to stay within `--memory`.
    pub sampled_prints: u64,
    /// Per family (its name): rules accepted, unverified, rejected.
    pub families: Vec<(&'static str, u64, u64, u64)>,
}

/// Hosts compared per path for host aliases: bounds the pairs a path shared
/// by every site (`/`, `/robots.txt`) makes.
const HOSTS_PER_PATH: usize = 16;

/// What a pass over a summary's keys found.
#[derive(Debug)]
pub(crate) struct KeyScan {
    /// The windows of its rows.
    pub windows: BTreeSet<i64>,
    /// Every row's key could be read and is greater than the row's before:
    /// the file is sorted with one row per key, as `summarize` and
    /// `summarize --merge` write it, so it can be mined as it is.
    pub sorted: bool,
    /// Each host's count of URLs, of their bytes and of rows, in the order
    /// read (for a sorted file: the order mining reads them in).
    pub hosts: Vec<Count>,
}

/// URLs, their targets' bytes and their rows (one per URL and window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Count {
    pub urls: u64,
    pub bytes: u64,
    pub rows: u64,
}

impl Count {
    fn add(&mut self, other: &Count) {
        self.urls += other.urls;
        self.bytes += other.bytes;
        self.rows += other.rows;
    }
}

/// Reads the keys of a summary file (after checking its header), and copies
/// every line as it is to `copy` when given. Only the first three columns
/// are read: a row that cannot be read is found by the pass that reads the
/// rows (here it only makes the file count as not sorted).
pub(crate) fn scan_keys(
    mut input: impl BufRead,
    name: &str,
    mut copy: Option<&mut dyn Write>,
) -> Result<KeyScan, MergeError> {
    // The redirect hints before the header are copied, not scanned: mining
    // reads them again.
    read_head(
        &mut input,
        name,
        copy.as_mut().map(|c| &mut **c as &mut dyn Write),
    )?;
    let mut line = Vec::new();
    let mut scan = KeyScan {
        windows: BTreeSet::new(),
        sorted: true,
        hosts: Vec::new(),
    };
    // The previous row that could be read, without its line end, and the
    // lengths of its host and URL and its window (not parsed again).
    let mut before: Vec<u8> = Vec::new();
    let mut before_key: Option<(usize, usize, Option<i64>)> = None;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).map_err(MergeError::Io)? == 0 {
            return Ok(scan);
        }
        if let Some(out) = copy.as_mut() {
            out.write_all(&line).map_err(MergeError::Io)?;
        }
        let row = line.strip_suffix(b"\n").unwrap_or(&line);
        let row = row.strip_suffix(b"\r").unwrap_or(row);
        let Ok((key, _)) = Key::parse(row) else {
            scan.sorted = false;
            continue;
        };
        if let Some(w) = key.window {
            scan.windows.insert(w);
        }
        let previous = before_key.map(|(host, url, window)| Key {
            host: &before[..host],
            url: &before[host + 1..host + 1 + url],
            window,
        });
        if previous.is_none_or(|b| b.host != key.host) {
            scan.hosts.push(Count::default());
        }
        if let Some(count) = scan.hosts.last_mut() {
            if previous.is_none_or(|b| (b.host, b.url) != (key.host, key.url)) {
                count.urls += 1;
                // The bytes mining keeps: the target (`/a?b`), not the whole URL.
                count.bytes += target_len(key.url);
            }
            count.rows += 1;
        }
        if scan.sorted && previous.is_some() {
            scan.sorted = previous.is_some_and(|b| b < key);
        }
        let this_key = (key.host.len(), key.url.len(), key.window);
        before.clear();
        before.extend_from_slice(row);
        before_key = Some(this_key);
    }
}

/// What mining keeps of a summary to stay within `--memory` (see
/// [`Budget::plan`]): each host's URLs, and the prints host aliases
/// compare, sampled by hash at a level (level `L` keeps about one in `2^L`;
/// 0 keeps all).
struct Budget {
    host_levels: Vec<u32>,
    print_level: u32,
    /// Expected prints kept, their keys' bytes and their windows.
    prints: Count,
}

/// Bytes mining keeps per URL of the host being mined besides its URL and
/// its windows: the entry, two allocations' overhead, and what proposing
/// and evaluating candidates take per URL (the order by size, the hashed
/// grouping keys, the popular sizes).
const URL_COST: u64 = URL_ENTRY_BYTES + 32 + 48;
/// The bytes of a [`UrlEntry`] when it held its target and windows in
/// allocations of its own (`String`, `Box<[WindowSize]>`): the budget of
/// `--memory` counts them still, so that it samples the URLs it sampled
/// (the same rules), with the two allocations' overhead it no longer
/// spends left as slack.
const URL_ENTRY_BYTES: u64 = 136;
/// Bytes per print besides its key and windows: the print, its place in
/// the aliases' order by key, and its key's run and entry in the index by
/// hash ([`ByKey`]).
const PRINT_COST: u64 = std::mem::size_of::<Print>() as u64 + 16;
/// What `--memory` leaves for what the miner does not count: the program,
/// buffers, candidates and findings, the allocator's slack (half of
/// `--memory` when that is less).
pub(crate) const MEMORY_RESERVE: usize = 24 << 20;

impl Budget {
    /// Levels for the hosts of `scan` within `memory`: none when the
    /// largest host's URLs and every URL's print fit together; else the
    /// prints get at most half and each host what is left.
    fn plan(hosts: &[Count], memory: usize) -> Budget {
        // A small budget keeps half of itself for the rest, not all of it.
        let limit = (memory - MEMORY_RESERVE.min(memory / 2)) as u64;
        let host_bytes = |c: &Count| c.urls * URL_COST + c.bytes + c.rows * 8;
        let mut all = Count::default();
        for c in hosts {
            all.add(c);
        }
        let print_bytes = all.urls * PRINT_COST + all.bytes + all.rows * 8;
        let largest = hosts.iter().map(host_bytes).max().unwrap_or(0);
        let level =
            |bytes: u64, share: u64| (0..63u32).find(|&l| bytes >> l <= share).unwrap_or(63);
        let (print_level, host_share) = if print_bytes + largest <= limit {
            (0, limit)
        } else {
            let print_share = print_bytes.min(limit / 2);
            (level(print_bytes, print_share), limit - print_share)
        };
        Budget {
            host_levels: hosts
                .iter()
                .map(|c| level(host_bytes(c), host_share))
                .collect(),
            print_level,
            prints: Count {
                urls: all.urls >> print_level,
                bytes: all.bytes >> print_level,
                rows: all.rows >> print_level,
            },
        }
    }
}

/// Whether a hash is kept at a sampling level.
fn kept(level: u32, hash: u64) -> bool {
    level == 0 || hash >> (64 - level.min(63)) == 0
}

/// The hash a URL of a host is sampled by: of its runs of digits, so that
/// the spellings of one page (`/story?id=7`, `/story_7`) are kept or left
/// together; URLs without digits are all kept or all left.
fn sample_hash(target: &str) -> u64 {
    let mut digits = Vec::with_capacity(target.len());
    let mut run = false;
    for b in target.bytes() {
        if b.is_ascii_digit() {
            digits.push(b);
            run = true;
        } else if run {
            digits.push(b'.');
            run = false;
        }
    }
    xxh64(&digits, 0x5a3b_1e0f)
}

/// Whether a print is kept at a sampling level: by its key or by its key
/// under another host's first segment (`/u/x` as `/x`), so that both sides
/// of every pair host aliases compare are kept or left together.
fn print_kept(level: u32, key: &str) -> bool {
    let hash = |k: &str| xxh64(k.as_bytes(), 0x9a11_a5e5);
    level == 0
        || kept(level, hash(key))
        || first_segment(key).is_some_and(|(_, rest)| kept(level, hash(&rest)))
}

/// Mines the summary in `file` (sorted by host, URL, window, as
/// `summarize` writes it). Reads it twice: its keys (unless `scan` gives
/// what they say), then the rows. Its tables stay within `memory` (less
/// [`MEMORY_RESERVE`]): past it, hosts and host aliases are mined on a
/// sample of their URLs (see [`Budget`]).
pub(crate) fn mine_file<F: BufRead + Seek>(
    file: &mut F,
    name: &str,
    scan: Option<KeyScan>,
    form: RowForm,
    opts: &MineOptions,
    memory: usize,
) -> Result<(Vec<Finding>, MineReport), MineError> {
    let scan = match scan {
        Some(s) => s,
        None => {
            let scan = scan_keys(&mut *file, name, None).map_err(MineError::Summary)?;
            file.seek(SeekFrom::Start(0))
                .map_err(|e| MineError::Summary(MergeError::Io(e)))?;
            scan
        }
    };
    // (The scan read the head already, or it is the program's own.)
    let (hints, head_lines) = read_head(&mut *file, name, None).map_err(MineError::Summary)?;
    mine_rows(&scan, &hints, name, opts, memory, |each| {
        for_each_row_in(&mut *file, name, head_lines, form, each)
    })
}

/// The rows of a summary in key order, handed to a miner's `each`.
type EachRow<'e> = dyn FnMut(Key<'_>, Values<'_>) -> Result<(), MergeError> + 'e;

/// Mines the rows that `rows` hands over in key order (host, URL,
/// window), of a summary whose keys `scan` tells and whose redirect hints
/// are `hints`; see [`mine_file`].
fn mine_rows(
    scan: &KeyScan,
    hints: &Hints,
    name: &str,
    opts: &MineOptions,
    memory: usize,
    each_row: impl FnOnce(&mut EachRow<'_>) -> Result<(), MergeError>,
) -> Result<(Vec<Finding>, MineReport), MineError> {
    let budget = Budget::plan(&scan.hosts, memory);
    // (A summary of no rows has nothing to mine, windows or not.)
    let rows = scan.hosts.iter().any(|h| h.rows > 0);
    if scan.windows.is_empty() && rows && opts.learn < 1.0 {
        return Err(MineError::NoWindows {
            file: name.to_owned(),
        });
    }
    let step = window_step(&scan.windows);
    let coarse = |w: i64| w.div_euclid(step) * step;
    let windows: BTreeSet<i64> = scan.windows.iter().map(|&w| coarse(w)).collect();
    // Learn on the windows whose middle lies in the first `--learn` of the
    // time span, confirm on the rest.
    let (first, end) = match (windows.first(), windows.last()) {
        (Some(&f), Some(&l)) => (f, l.saturating_add(step)),
        _ => (0, 0),
    };
    let cut = first as f64 + (end - first) as f64 * opts.learn.clamp(0.0, 1.0);
    let split = windows
        .iter()
        .copied()
        .find(|&w| w as f64 + step as f64 / 2.0 >= cut); // first confirming window
    let learned = split.map_or(windows.len(), |s| windows.range(..s).count());
    let confirming = split.is_some();
    let mut report = MineReport {
        learn_windows: learned as u64,
        confirm_windows: (windows.len() - learned) as u64,
        window_seconds: u64::try_from(step).unwrap_or(0),
        ..MineReport::default()
    };

    // Each window's index (its place in time order); rows without a time
    // are one window of their own, after all the others.
    let window_list: Vec<i64> = windows.iter().copied().collect();
    let window_index = |w: Option<i64>| -> u32 {
        let i = match w {
            Some(w) => window_list.binary_search(&w).unwrap_or_else(|i| i),
            None => window_list.len(),
        };
        u32::try_from(i).unwrap_or(u32::MAX)
    };
    let reserve = |n: u64| usize::try_from(n).unwrap_or(0);
    let mut miner = Miner {
        opts,
        confirming,
        findings: Vec::new(),
        prints: Vec::with_capacity(reserve(budget.prints.urls)),
        keys: String::with_capacity(reserve(budget.prints.bytes)),
        windows: Vec::with_capacity(reserve(budget.prints.rows)),
        hosts: Vec::new(),
        print_level: budget.print_level,
        report: &mut report,
    };
    // The current host's URLs (its place among the hosts, its sampling
    // level), and the current URL's two parts.
    let mut host: Option<String> = None;
    let mut host_index = 0;
    let mut level = 0;
    let mut urls = HostUrls::default();
    let mut current: Option<Current> = None;
    // The last URL's buffers, emptied, for the next one: its text and its
    // two window lists were allocated, grown and freed for every URL.
    let mut spare: Option<Current> = None;
    let mut sampled_urls = 0;
    let mut flush_url = |current: &mut Option<Current>,
                         spare: &mut Option<Current>,
                         urls: &mut HostUrls,
                         level: u32| {
        if let Some(mut c) = current.take() {
            c.close_window(&window_index, split);
            let target = target_of(&c.url);
            // (Level 0 keeps every URL: no hash to make.)
            if level == 0 || kept(level, sample_hash(target)) {
                keep_windows(&mut c.learn_windows);
                keep_windows(&mut c.confirm_windows);
                urls.push(
                    target,
                    &c.learn,
                    &c.confirm,
                    &c.learn_windows,
                    &c.confirm_windows,
                );
            } else {
                sampled_urls += 1;
            }
            c.url.clear();
            c.learn_windows.clear();
            c.confirm_windows.clear();
            *spare = Some(c);
        }
    };
    let mut hints = hints_by_host(hints);
    // The last row's host and URL bytes: most rows repeat them, and equal
    // bytes need no UTF-8 check (hosts and URLs are compared as the lossy
    // text they are kept as, so bytes that differ are still compared so).
    let (mut last_host, mut last_url): (Vec<u8>, Vec<u8>) = (Vec::new(), Vec::new());
    each_row(&mut |key: Key<'_>, row: Values<'_>| {
        let row_host = text_if_new(&mut last_host, key.host, host.is_some());
        if let Some(row_host) = row_host.filter(|h| host.as_deref() != Some(&**h)) {
            flush_url(&mut current, &mut spare, &mut urls, level);
            if let Some(h) = host.take() {
                let hints = hints.remove(&h).unwrap_or_default();
                miner.host(h, urls.entries(), &hints);
                urls.clear();
                host_index += 1;
            }
            host = Some(row_host.into_owned());
            level = budget.host_levels.get(host_index).copied().unwrap_or(0);
            if let Some(c) = scan.hosts.get(host_index) {
                urls.reserve(
                    reserve(c.urls >> level),
                    reserve(c.bytes >> level),
                    reserve(c.rows >> level),
                );
            }
        }
        let url = text_if_new(&mut last_url, key.url, current.is_some());
        if let Some(url) = url.filter(|u| current.as_ref().is_none_or(|c| c.url != *u)) {
            flush_url(&mut current, &mut spare, &mut urls, level);
            current = Some(match spare.take() {
                Some(mut c) => {
                    c.url.push_str(&url);
                    c.learn.clear();
                    c.confirm.clear();
                    c.window = None;
                    c.window_rows.clear();
                    c
                }
                None => Current {
                    url: url.into_owned(),
                    learn: UrlSummary::default(),
                    confirm: UrlSummary::default(),
                    learn_windows: Vec::new(),
                    confirm_windows: Vec::new(),
                    window: None,
                    window_rows: UrlSummary::default(),
                },
            });
        }
        if let Some(c) = current.as_mut() {
            let window = key.window.map(coarse);
            if c.window.is_some_and(|w| w != window) {
                c.close_window(&window_index, split);
            }
            c.window = Some(window);
            row.merge_into(&mut c.window_rows);
            let part = match (window, split) {
                (Some(w), Some(s)) if w >= s => &mut c.confirm,
                _ => &mut c.learn,
            };
            row.merge_into(part);
        }
        Ok(())
    })
    .map_err(MineError::Summary)?;
    flush_url(&mut current, &mut spare, &mut urls, level);
    if let Some(h) = host.take() {
        let hints = hints.remove(&h).unwrap_or_default();
        miner.host(h, urls.entries(), &hints);
    }
    miner.report.sampled_urls = sampled_urls;
    miner.aliases();
    let mut findings = miner.findings;
    // Ids in output order: hosts as read, then the aliases.
    let mut numbers: HashMap<&'static str, u64> = HashMap::new();
    for f in &mut findings {
        let stem = f.rule.family().id_stem();
        let n = numbers.entry(stem).or_default();
        *n += 1;
        f.id = format!("m-{stem}-{n}");
        match f.decision {
            Decision::Accepted => report.accepted += 1,
            Decision::Unverified(_) => report.unverified += 1,
            Decision::Rejected(_) => report.rejected += 1,
        }
    }
    report.families = family_counts(&findings)
        .into_iter()
        .map(|(f, a, u, r)| (f.name(), a, u, r))
        .collect();
    Ok((findings, report))
}

/// Writes the summary of `tables` (the workers' of `canonurl mine` on
/// logs, whose rows have `windows`) for [`mine_file`] to read in
/// [`RowForm::Binary`], and returns what [`scan_keys`] would find in the
/// summary `summarize` writes of them, with the number of its rows.
///
/// The rows are written already merged into the window the miner compares
/// in ([`window_step`] of `windows`, which the scan passes on as they
/// are): mining merges a URL's rows of one such window as it reads them,
/// and merging is exact, so it finds the same values in fewer rows. The
/// scan counts the summary's own rows, as the budget of `--memory` does
/// for a summary file: one per row of the tables, or where the tables
/// gathered rows of a day (`sink::DayFold`), one per window their `seen`
/// bits mark, over the rows of a URL and miner's window together.
pub(crate) fn summary_for_mining(
    mut tables: Vec<SummaryTable>,
    windows: BTreeSet<i64>,
    out: &mut dyn Write,
) -> Result<(KeyScan, u64), MergeError> {
    let step = window_step(&windows);
    let coarse = |w: i64| w.div_euclid(step) * step;
    table::write_head(&mut tables, out)?;
    let mut scan = KeyScan {
        windows,
        sorted: true,
        hosts: Vec::new(),
    };
    let mut buf = Vec::with_capacity(1 << 17);
    // The row being gathered for the previous row's URL (`count.last()`):
    // its window (the miner's) and values.
    let mut count = SummaryCount::default();
    let mut pending: Option<(Option<i64>, Owned)> = None;
    // The last merged row's `UrlSummary`, emptied, for the next merge.
    let mut spare = UrlSummary::default();
    let mut flush = |(host, url): (&[u8], &[u8]),
                     pending: &mut Option<(Option<i64>, Owned)>,
                     spare: &mut UrlSummary| {
        if let Some((window, s)) = pending.take() {
            s.values().write_bin(Key { host, url, window }, 0, &mut buf);
            if let Owned::Summary(mut s) = s {
                s.clear();
                *spare = s;
            }
            if buf.len() >= 1 << 16 {
                out.write_all(&buf).map_err(MergeError::Io)?;
                buf.clear();
            }
        }
        Ok::<(), MergeError>(())
    };
    table::each_row(tables, |row, s, seen| {
        let window = row.window.map(coarse);
        let step = count.row(row, window, seen);
        match &mut pending {
            Some((_, gathered)) if step.joins => {
                gathered.merge_reusing(s, &mut spare);
            }
            _ => {
                flush(count.last(), &mut pending, &mut spare)?;
                pending = Some((window, s.to_owned()));
            }
        }
        count.moved_to(row, step);
        Ok(())
    })?;
    flush(count.last(), &mut pending, &mut spare)?;
    out.write_all(&buf).map_err(MergeError::Io)?;
    scan.hosts = count.hosts;
    let rows = scan.hosts.iter().map(|c| c.rows).sum();
    Ok((scan, rows))
}

/// What [`mine_tables`] found, and the summary's rows.
pub(crate) type MinedTables = (Vec<Finding>, MineReport, u64);

/// Mines the rows of `tables` (the workers' of `canonurl mine` on logs,
/// whose rows have `windows`) as they are merged, without the summary
/// [`summary_for_mining`] writes and [`mine_file`] reads back, when
/// `bound` (each host's [`Count`] at most, [`CountBound`]) shows that
/// [`Budget::plan`] samples nothing: what the plan needs every host's
/// exact counts for first is then known. The same findings and report as
/// `mine_file` on that summary (its rows are these merged into the miner's
/// window, and merging is exact), and its number of rows. `Err(tables)`,
/// untouched, when the bound leaves room for sampling.
pub(crate) fn mine_tables(
    mut tables: Vec<SummaryTable>,
    windows: BTreeSet<i64>,
    bound: Vec<Count>,
    opts: &MineOptions,
    memory: usize,
) -> Result<Result<MinedTables, MineError>, Vec<SummaryTable>> {
    let plan = Budget::plan(&bound, memory);
    if plan.print_level != 0 || plan.host_levels.iter().any(|&l| l != 0) {
        return Err(tables);
    }
    // The redirect hints as the summary's head gives them to `mine_file`.
    let mut head = Vec::new();
    let hints = table::write_head(&mut tables, &mut head)
        .and_then(|()| read_head(&mut &head[..], "<summary>", None));
    let hints = match hints {
        Ok((hints, _)) => hints,
        Err(e) => return Ok(Err(MineError::Summary(e))),
    };
    let step = window_step(&windows);
    let coarse = |w: i64| w.div_euclid(step) * step;
    let scan = KeyScan {
        windows,
        sorted: true,
        hosts: bound,
    };
    let mut count = SummaryCount::default();
    let mined = mine_rows(&scan, &hints, "<summary>", opts, memory, |each| {
        table::each_row(tables, |key, values, seen| {
            let step = count.row(key, key.window.map(coarse), seen);
            count.moved_to(key, step);
            each(key, values)
        })
        .map(drop)
    });
    let rows = count.hosts.iter().map(|c| c.rows).sum();
    Ok(mined.map(|(findings, report)| (findings, report, rows)))
}

/// Counts each host's URLs, bytes and rows in the summary
/// [`summary_for_mining`] writes, from the tables' rows in key order (as
/// [`scan_keys`] would count that summary): a row is one, or for rows with
/// `seen` bits, one per window they mark, over the rows of a URL and
/// miner's window together. Both [`summary_for_mining`] and [`mine_tables`]
/// count with it, so the two agree.
#[derive(Default)]
struct SummaryCount {
    /// The last row's host and URL (`key[..host]`, `key[host..]`), its
    /// miner's window (`None` before the first row) and the `seen` bits of
    /// the rows of its URL and window.
    key: Vec<u8>,
    host: usize,
    window: Option<Option<i64>>,
    seen: u32,
    /// One per host, in key order.
    hosts: Vec<Count>,
}

/// How a row stands to the row before it.
#[derive(Clone, Copy)]
struct RowStep {
    same_url: bool,
    /// The same URL and miner's window: merged into one row of the summary.
    joins: bool,
}

impl SummaryCount {
    /// Counts `row`, of the miner's window `window`, and tells how it
    /// stands to the row before, whose key [`SummaryCount::last`] gives until
    /// [`SummaryCount::moved_to`] is called with this step.
    fn row(&mut self, row: Key<'_>, window: Option<i64>, seen: u32) -> RowStep {
        let (host, url) = self.last();
        let same_host = self.window.is_some() && host == row.host;
        let same_url = same_host && url == row.url;
        let joins = same_url && self.window == Some(window);
        if !joins {
            self.seen = 0;
        }
        if !same_host {
            self.hosts.push(Count::default());
        }
        if let Some(count) = self.hosts.last_mut() {
            if !same_url {
                count.urls += 1;
                count.bytes += target_len(row.url);
            }
            count.rows += match seen {
                0 => 1,
                _ => u64::from((seen & !self.seen).count_ones()),
            };
        }
        self.seen |= seen;
        self.window = Some(window);
        RowStep { same_url, joins }
    }

    /// The host and URL of the row counted last (empty before the first).
    fn last(&self) -> (&[u8], &[u8]) {
        self.key.split_at(self.host)
    }

    /// Makes `row`, just counted with `step`, the last row.
    fn moved_to(&mut self, row: Key<'_>, step: RowStep) {
        if !step.same_url {
            self.key.clear();
            self.key.extend_from_slice(row.host);
            self.key.extend_from_slice(row.url);
            self.host = row.host.len();
        }
    }
}

/// An upper bound of each host's [`Count`] in the summary of tables,
/// counted as their rows are written to runs (`SummaryTable::write_run`)
/// or from the rows a table keeps: each sorted source's own counts, added
/// up. A URL in several sources counts in each, and a row with `seen`
/// bits counts every window they mark: never fewer than the summary's
/// URLs, bytes and rows ([`summary_for_mining`]'s scan).
#[derive(Debug, Default)]
pub(crate) struct CountBound {
    hosts: HashMap<Vec<u8>, Count>,
    /// The current source's host, its last URL, and their counts so far
    /// (`None`: no row of the source yet).
    host: Vec<u8>,
    url: Vec<u8>,
    count: Option<Count>,
}

impl CountBound {
    /// Counts the next row of the current source (rows in key order).
    pub(crate) fn row(&mut self, key: Key<'_>, seen: u32) {
        let new_host = self.count.is_none() || self.host != key.host;
        if new_host {
            self.end_host();
            self.host.clear();
            self.host.extend_from_slice(key.host);
        }
        let count = self.count.get_or_insert_with(Count::default);
        if new_host || self.url != key.url {
            count.urls += 1;
            count.bytes += target_len(key.url);
            self.url.clear();
            self.url.extend_from_slice(key.url);
        }
        count.rows += u64::from(seen.count_ones().max(1));
    }

    /// Ends the current source: the next row starts another.
    pub(crate) fn end_source(&mut self) {
        self.end_host();
    }

    fn end_host(&mut self) {
        if let Some(c) = self.count.take() {
            self.hosts.entry(self.host.clone()).or_default().add(&c);
        }
    }

    /// Adds another bound's counts.
    pub(crate) fn merge(&mut self, mut other: CountBound) {
        self.end_host();
        other.end_host();
        for (host, c) in other.hosts {
            self.hosts.entry(host).or_default().add(&c);
        }
    }

    /// The bounds by host, in key order (the order mining reads the hosts).
    pub(crate) fn hosts(mut self) -> Vec<Count> {
        self.end_host();
        let mut hosts: Vec<(Vec<u8>, Count)> = self.hosts.into_iter().collect();
        hosts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        hosts.into_iter().map(|(_, c)| c).collect()
    }
}

/// The URLs of the host being read, for [`Miner::host`]: their targets one
/// after the other in one text, their windows in one list.
#[derive(Default)]
struct HostUrls {
    targets: String,
    windows: Vec<WindowSize>,
    urls: Vec<KeptUrl>,
}

/// A [`UrlEntry`] while its host's URLs are read: where its target and
/// windows are in [`HostUrls`]' text and list (which still grow).
struct KeptUrl {
    target: (usize, usize),
    hits: u64,
    learn: Side,
    confirm: Side,
    windows: (usize, usize),
    learned: u8,
}

impl HostUrls {
    /// Room for `urls` more URLs, `bytes` more bytes of their targets and
    /// `windows` more windows (what the scan counts: none past the sizes
    /// of the host's own).
    fn reserve(&mut self, urls: usize, bytes: usize, windows: usize) {
        self.urls.reserve(urls);
        self.targets.reserve(bytes);
        self.windows.reserve(windows);
    }

    /// Keeps a URL: its target, its two parts and their sizes per window
    /// (at most [`WINDOWS_KEPT`](super::evidence::WINDOWS_KEPT) each).
    fn push(
        &mut self,
        target: &str,
        learn: &UrlSummary,
        confirm: &UrlSummary,
        learn_windows: &[WindowSize],
        confirm_windows: &[WindowSize],
    ) {
        let (start, first) = (self.targets.len(), self.windows.len());
        self.targets.push_str(target);
        self.windows.extend_from_slice(learn_windows);
        self.windows.extend_from_slice(confirm_windows);
        self.urls.push(KeptUrl {
            target: (start, self.targets.len()),
            hits: learn.hits + confirm.hits,
            learn: Side::of(learn),
            confirm: Side::of(confirm),
            windows: (first, self.windows.len()),
            learned: learn_windows.len() as u8, // at most WINDOWS_KEPT
        });
    }

    /// The URLs kept, in the order they came. (Their list becomes the
    /// entries' where it lies: a `KeptUrl` and a `UrlEntry` have one size.)
    fn entries(&mut self) -> Vec<UrlEntry<'_>> {
        let (targets, windows) = (&self.targets, &self.windows);
        std::mem::take(&mut self.urls)
            .into_iter()
            .map(|u| UrlEntry {
                target: &targets[u.target.0..u.target.1],
                hits: u.hits,
                learn: u.learn,
                confirm: u.confirm,
                windows: &windows[u.windows.0..u.windows.1],
                learned: u.learned,
            })
            .collect()
    }

    /// Empties the text and the list (freed: the next host may be small,
    /// and the prints grow after).
    fn clear(&mut self) {
        *self = HostUrls::default();
    }
}

/// The URL being read: its rows' two parts merged, and its sizes per window.
struct Current {
    url: String,
    learn: UrlSummary,
    confirm: UrlSummary,
    learn_windows: Vec<WindowSize>,
    confirm_windows: Vec<WindowSize>,
    /// The window being read (the summary's windows merged into the
    /// miner's coarser one), when one is.
    window: Option<Option<i64>>,
    /// Its rows merged: exact, as merging summaries is (empty when no
    /// window is being read; cleared, not made anew, for the next).
    window_rows: UrlSummary,
}

impl Current {
    /// Ends the window being read: its size signature joins its part's list.
    fn close_window(&mut self, index: &impl Fn(Option<i64>) -> u32, split: Option<i64>) {
        let Some(window) = self.window.take() else {
            return;
        };
        let size =
            page_signature(&self.window_rows).and_then(|sig| WindowSize::new(index(window), &sig));
        self.window_rows.clear();
        let list = match (window, split) {
            (Some(w), Some(s)) if w >= s => &mut self.confirm_windows,
            _ => &mut self.learn_windows,
        };
        list.extend(size);
    }
}

/// Window lengths the miner compares sizes in, finest first: a window is
/// short enough that a page's content changes little within it, and long
/// enough to hold several responses of a URL.
const WINDOW_STEPS: [i64; 3] = [3_600, 6 * 3_600, DAY];
/// Seconds in a day: the longest of [`WINDOW_STEPS`].
pub(crate) const DAY: i64 = 86_400;
/// Windows a log should have for its learning and confirming parts to hold
/// several each.
const WINDOWS_WANTED: usize = 8;
/// Days a log's windows (of a day or less) fall on from which
/// [`window_step`] is a day, whatever its other windows: `canonurl mine`
/// gathers its rows by day from there on (`sink::DayFold`).
pub(crate) const DAYS_FOR_DAY_STEP: usize = WINDOWS_WANTED;

/// The window the miner compares in: the longest of [`WINDOW_STEPS`] (a day
/// at most) that still gives the log [`WINDOWS_WANTED`] windows, never finer
/// than the summary's own (the smallest gap between its windows). A log of
/// two weeks is compared by day, a log of one day by hour.
fn window_step(windows: &BTreeSet<i64>) -> i64 {
    let given = windows
        .iter()
        .zip(windows.iter().skip(1))
        .map(|(a, b)| b - a)
        .min()
        .unwrap_or(86_400)
        .max(1);
    if given >= 86_400 {
        return 86_400; // a summary's windows of a day or more, as they are
    }
    let count = |step: i64| -> usize {
        let mut n = 0;
        let mut last = None;
        for &w in windows {
            let c = w.div_euclid(step);
            if last != Some(c) {
                n += 1;
                last = Some(c);
            }
        }
        n
    };
    WINDOW_STEPS
        .iter()
        .rev()
        .copied()
        .filter(|&step| step >= given)
        .find(|&step| count(step) >= WINDOWS_WANTED)
        .unwrap_or(given)
}

/// The summary URL from its path on (`https://h/a?b` → `/a?b`); a path-only
/// URL as it is.
fn target_of(url: &str) -> &str {
    // Bytes and memchr, not `str::find`: a substring search's setup and a
    // char searcher cost more than the short URLs they run on, once per
    // URL when the summary is read and again when it is mined. The bytes
    // found are ASCII, so the cuts are on char boundaries.
    let bytes = url.as_bytes();
    if bytes.first() == Some(&b'/') {
        return url;
    }
    let mut from = 0;
    let scheme_end = loop {
        match memchr::memchr(b':', &bytes[from..]) {
            Some(k) if bytes[from + k + 1..].starts_with(b"//") => break Some(from + k),
            Some(k) => from += k + 1,
            None => break None,
        }
    };
    match scheme_end {
        Some(i) => {
            let rest = &url[i + 3..];
            match memchr::memchr2(b'/', b'?', rest.as_bytes()) {
                Some(j) if rest.as_bytes()[j] == b'/' => &rest[j..],
                _ => "/",
            }
        }
        None => url,
    }
}

/// The length of [`target_of`] the URL's text as the miner keeps it
/// (lossy UTF-8): for the budget's count of bytes.
fn target_len(url: &[u8]) -> u64 {
    let len = match simdutf8::basic::from_utf8(url) {
        Ok(text) => target_of(text).len(),
        Err(_) => target_of(&String::from_utf8_lossy(url)).len(),
    };
    len as u64
}

/// URLs of a host tried per rewrite by [`unchain`]: enough to meet the
/// spellings a family has, few enough that a host of a million URLs costs
/// no more than one of a thousand.
const CHAIN_SAMPLE: usize = 1_000;

/// Rejects the weaker of two rewrites of one host (accepted or unverified)
/// when a URL the one rewrites is rewritten again by the other (or by
/// itself): the rules file applies its rewrites once, in its order, so such
/// a chain would make the mined file change a URL again when applied to its
/// own output (found by the `mined_rules` fuzz target: substitutions among
/// three spellings, a redirect to a spelling a slug rule rewrites). Weaker:
/// fewer agreeing pairs when learned, then the later one.
fn unchain(findings: &mut [Finding], urls: &[UrlEntry]) {
    let rewrites: Vec<usize> = (0..findings.len())
        .filter(|&i| {
            matches!(findings[i].rule, Rule::Rewrite { .. })
                && !matches!(findings[i].decision, Decision::Rejected(_))
        })
        .collect();
    for &i in &rewrites {
        if matches!(findings[i].decision, Decision::Rejected(_)) {
            continue;
        }
        let outputs: Vec<String> = urls
            .iter()
            .filter_map(|u| findings[i].rule.apply(u.target))
            .map(|out| after_rewrites(findings, out))
            .take(CHAIN_SAMPLE)
            .collect();
        for &j in &rewrites {
            if matches!(findings[j].decision, Decision::Rejected(_)) {
                continue;
            }
            let Some(again) = outputs.iter().find(|o| findings[j].rule.apply(o).is_some()) else {
                continue;
            };
            let weaker = if i == j || findings[j].learn.agree < findings[i].learn.agree {
                j
            } else if findings[i].learn.agree < findings[j].learn.agree {
                i
            } else {
                i.max(j)
            };
            let why = if i == j {
                format!("its own output {again} is rewritten again by it")
            } else {
                format!(
                    "chains with another rewrite: {again}, written by {}, is rewritten \
                     again by {}",
                    findings[i].rule.describe(),
                    findings[j].rule.describe()
                )
            };
            findings[weaker].decision = Decision::Rejected(why);
            if weaker == i {
                break;
            }
        }
    }
}

/// `target` as the host's other rules (parameters, index files, case; not
/// rejected) leave it: the rules file runs them again after a rewrite, so a
/// rewrite's output is what they make of it (`/p?id=7&ref=a` with `ref=a` a
/// default is `/p?id=7`, which another rewrite may take).
fn after_rewrites(findings: &[Finding], mut target: String) -> String {
    for f in findings {
        if matches!(f.rule, Rule::Rewrite { .. } | Rule::HostAlias { .. })
            || matches!(f.decision, Decision::Rejected(_))
        {
            continue;
        }
        if let Some(out) = f.rule.apply(&target) {
            target = out;
        }
    }
    target
}

/// A URL as host aliases compare it: its host, its target, and what a
/// verdict reads of its two parts (statuses, popular, sizes per window).
struct Print {
    host: u32,
    /// Where its key (the target's grouping key) is in [`Miner::keys`].
    key: (usize, usize),
    hits: u64,
    /// Where its windows are in [`Miner::windows`]: the learning part's
    /// (`learned` of them), then the confirming part's (`confirmed`).
    windows: usize,
    learned: u8,
    confirmed: u8,
    /// Ok, missing and popular of the learning part, then of the confirming one.
    flags: [bool; 6],
}

impl Print {
    fn key<'k>(&self, keys: &'k str) -> &'k str {
        &keys[self.key.0..self.key.1]
    }

    fn learn<'w>(&self, windows: &'w [WindowSize]) -> Part<'w> {
        let start = self.windows;
        Part {
            ok: self.flags[0],
            missing: self.flags[1],
            popular: self.flags[2],
            windows: &windows[start..start + usize::from(self.learned)],
        }
    }

    fn confirm<'w>(&self, windows: &'w [WindowSize]) -> Part<'w> {
        let start = self.windows + usize::from(self.learned);
        Part {
            ok: self.flags[3],
            missing: self.flags[4],
            popular: self.flags[5],
            windows: &windows[start..start + usize::from(self.confirmed)],
        }
    }
}

struct Miner<'a> {
    opts: &'a MineOptions,
    confirming: bool,
    findings: Vec<Finding>,
    prints: Vec<Print>,
    /// The prints' keys, one after the other (one allocation, not one each).
    keys: String,
    /// The prints' sizes per window, one after the other.
    windows: Vec<WindowSize>,
    /// The sampling level of the prints (see [`Budget`]).
    print_level: u32,
    hosts: Vec<String>,
    report: &'a mut MineReport,
}

impl Miner<'_> {
    /// Mines one host's URLs (and its redirect hints), and keeps their
    /// prints for the aliases.
    fn host(&mut self, host: String, mut urls: Vec<UrlEntry>, hints: &HostHints) {
        let th = &self.opts.thresholds;
        self.report.hosts += 1;
        self.report.urls += urls.len() as u64;
        mark_popular(urls.iter_mut().map(|u| &mut u.learn), th.popular_size);
        mark_popular(urls.iter_mut().map(|u| &mut u.confirm), th.popular_size);
        let proposals = propose(&urls, th);
        self.report.skipped_buckets += proposals.skipped_buckets;
        self.report.dropped_candidates += proposals.dropped;
        let redirects = propose_redirects(&urls, th);
        // A rule the redirects say is the same candidate as when its URLs'
        // sizes propose it (the redirects its support), or one of its own.
        let mut candidates: Vec<(super::candidates::Candidate, u64)> = proposals
            .candidates
            .into_iter()
            .chain(redirects)
            .map(|c| (c, 0))
            .collect();
        for (c, n) in from_hints(&hints.pairs, th) {
            let same = candidates
                .iter_mut()
                .find(|(o, _)| o.rule.describe() == c.rule.describe());
            match same {
                Some((_, redirects)) => *redirects += n,
                None => candidates.push((c, n)),
            }
        }
        let first = self.findings.len();
        for (c, redirects) in candidates {
            let (learn, confirm) = evaluate(&urls, &c.rule, redirects > 0);
            let decision = match c.refused {
                Some(why) => Decision::Rejected(why),
                None if c.rule.family() == Family::Literal => self.decide_literal(&learn, &confirm),
                None => self.decide(&learn, &confirm),
            };
            self.findings.push(Finding {
                id: String::new(),
                host: host.clone(),
                rule: c.rule,
                decision,
                proposals: c.proposals,
                redirects,
                learn,
                confirm,
            });
        }
        unchain(&mut self.findings[first..], &urls);
        self.findings.extend(scheme_finding(&host, hints.to_https));
        if host.is_empty() {
            return; // path-only URLs: no host to alias
        }
        let id = self.hosts.len() as u32;
        self.hosts.push(host);
        let (keys, windows) = (&mut self.keys, &mut self.windows);
        let level = self.print_level;
        let mut sampled = 0;
        self.prints.extend(urls.into_iter().filter_map(|u| {
            // The key goes straight to the end of `keys`, and is taken
            // back off when the print is not kept.
            let start = keys.len();
            push_grouping_key(u.target, keys);
            if !print_kept(level, &keys[start..]) {
                keys.truncate(start);
                sampled += 1;
                return None;
            }
            let (learn, confirm) = (u.learn_part(), u.confirm_part());
            let print = Print {
                host: id,
                key: (start, keys.len()),
                hits: u.hits,
                windows: windows.len(),
                learned: u.learned,
                confirmed: confirm.windows.len() as u8, // at most WINDOWS_KEPT
                flags: [
                    learn.ok,
                    learn.missing,
                    learn.popular,
                    confirm.ok,
                    confirm.missing,
                    confirm.popular,
                ],
            };
            windows.extend_from_slice(u.windows);
            Some(print)
        }));
        self.report.sampled_prints += sampled;
    }

    fn decide(&self, learn: &Tally, confirm: &Tally) -> Decision {
        let th = &self.opts.thresholds;
        if let Some(why) = rejection(learn, th) {
            return Decision::Rejected(why);
        }
        if !self.confirming {
            return if self.opts.learn >= 1.0 {
                Decision::Accepted
            } else {
                Decision::Unverified("the log has no later window to confirm on".into())
            };
        }
        if confirm.status_contradict > 0 {
            return Decision::Rejected(format!(
                "held out: {} pairs answer 200 against 404/410",
                confirm.status_contradict
            ));
        }
        // Sizes are noisy (aborted transfers, jitter): a few contradictions
        // in many confirmations do not refute a rule, a tenth does.
        if confirm.contradict * 10 > confirm.tested() {
            return Decision::Rejected(format!(
                "held out: {} pairs contradict, {} agree",
                confirm.contradict, confirm.agree
            ));
        }
        if confirm.agree < th.min_confirm {
            return Decision::Unverified(format!(
                "held out: {} pairs confirm < --min-confirm {}",
                confirm.agree, th.min_confirm
            ));
        }
        Decision::Accepted
    }

    /// A literal alias rests on its one pair: it agrees when learned (the
    /// exact sizes and `--min-hits` were checked when it was proposed) and
    /// again on the later part.
    fn decide_literal(&self, learn: &Tally, confirm: &Tally) -> Decision {
        if learn.agree != 1 || learn.tested() != 1 {
            return Decision::Rejected(format!(
                "a literal alias merges one pair: {} agree, {} contradict",
                learn.agree,
                learn.contradict + learn.status_contradict
            ));
        }
        if !self.confirming {
            return self.decide(learn, confirm);
        }
        if confirm.contradict + confirm.status_contradict > 0 {
            return Decision::Rejected("held out: the pair contradicts".into());
        }
        if confirm.agree == 0 {
            return Decision::Unverified("held out: the pair cannot be compared".into());
        }
        Decision::Accepted
    }

    /// Host aliases: the same target on two hosts (`a/x` ≡ `b/x`), or a
    /// host's target under another host's first segment (`u.h/x` ≡
    /// `h/u/x`), agreeing in size.
    fn aliases(&mut self) {
        let by_key = ByKey::new(&self.prints, &self.keys);
        // Two passes over the pairs: the (from host, to host, segment) with
        // at least one pair agreeing when learned, then the tallies of only
        // those (most pairs of hosts never agree, and a tally with its
        // examples for each of them was most of mining's memory).
        let windows = &self.windows;
        // (from host, to host, segment) -> tallies and hits on each side,
        // made empty on the first pass for those that agree once, filled
        // on the second. (hashbrown's hasher: these maps are looked up once
        // per pair of prints, and their order is sorted away below.)
        type Obs = (Tally, Tally, u64, u64);
        let mut obs: hashbrown::HashMap<(u32, u32, Option<&str>), Obs> = hashbrown::HashMap::new();
        alias_pairs(&by_key, |a, b, seg| {
            if agrees(a.learn(windows), b.learn(windows)) {
                obs.entry((a.host, b.host, seg)).or_default();
            }
        });
        let (hosts, keys) = (&self.hosts, &self.keys);
        alias_pairs(&by_key, |a, b, seg| {
            let Some(e) = obs.get_mut(&(a.host, b.host, seg)) else {
                return;
            };
            let names = || {
                (
                    format!("{}{}", hosts[a.host as usize], a.key(keys)),
                    format!("{}{}", hosts[b.host as usize], b.key(keys)),
                )
            };
            e.0.add(a.learn(windows), b.learn(windows), names);
            e.1.add(a.confirm(windows), b.confirm(windows), names);
            e.2 += a.hits;
            e.3 += b.hits;
        });
        let mut list: Vec<_> = obs
            .into_iter()
            .filter(|(_, (learn, _, _, _))| learn.agree > 0)
            .map(|((a, b, seg), o)| ((a, b, seg.map(str::to_owned)), o))
            .collect();
        // The best supported first: an alias that would chain after it is dropped.
        list.sort_by(|x, y| y.1 .0.agree.cmp(&x.1 .0.agree).then_with(|| x.0.cmp(&y.0)));
        let mut sources: Vec<u32> = Vec::new();
        let mut targets: Vec<u32> = Vec::new();
        for ((a, b, seg), (learn, confirm, hits_a, hits_b)) in list {
            let (ha, hb) = (&self.hosts[a as usize], &self.hosts[b as usize]);
            // Plain aliases go to the name, not the address, then to the
            // host with more hits; a segment alias goes to the host that has
            // the segment (`u.h/` → `h/u/`).
            let (from, to, rule) = match &seg {
                None => {
                    let a_first = is_address(hb) && !is_address(ha)
                        || (is_address(ha) == is_address(hb) && hits_a > hits_b);
                    let (f, t) = if a_first { (b, a) } else { (a, b) };
                    let (hf, ht) = (&self.hosts[f as usize], &self.hosts[t as usize]);
                    (
                        f,
                        t,
                        Rule::HostAlias {
                            from: format!("{hf}/"),
                            to: format!("{ht}/"),
                        },
                    )
                }
                Some(seg) => (
                    a,
                    b,
                    Rule::HostAlias {
                        from: format!("{ha}/"),
                        to: format!("{hb}/{seg}/"),
                    },
                ),
            };
            let mut decision = self.decide(&learn, &confirm);
            if !matches!(decision, Decision::Rejected(_))
                && (sources.contains(&from) || sources.contains(&to) || targets.contains(&from))
            {
                decision = Decision::Rejected(
                    "another alias of these hosts is better supported (aliases do not chain)"
                        .into(),
                );
            }
            if !matches!(decision, Decision::Rejected(_)) {
                sources.push(from);
                targets.push(to);
            }
            self.findings.push(Finding {
                id: String::new(),
                host: String::new(),
                rule,
                decision,
                proposals: 0,
                redirects: 0,
                learn,
                confirm,
            });
        }
    }
}

/// `bytes` as text (lossy), unless they are the `last` bytes seen and
/// `known` (what they gave is kept already); remembers them as the last.
fn text_if_new<'b>(last: &mut Vec<u8>, bytes: &'b [u8], known: bool) -> Option<Cow<'b, str>> {
    if known && last == bytes {
        return None;
    }
    last.clear();
    last.extend_from_slice(bytes);
    // Valid UTF-8 (nearly every key) told by simdutf8's vector check:
    // `from_utf8_lossy`'s chunks cost about 400 instructions a URL of
    // *wide*. The same text either way.
    Some(match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    })
}

/// The prints grouped by key: their indices sorted by key (then in reading
/// order), where each key's run starts, and the runs by a hash of their key
/// (4, 4 and about 6 bytes a print, where a map from each key to a list of
/// its prints took about 130). The hash index answers [`ByKey::get`], called
/// once per print: a binary search there compared keys all over memory.
struct ByKey<'p> {
    prints: &'p [Print],
    keys: &'p str,
    order: Vec<u32>,
    runs: Vec<u32>,
    index: hashbrown::HashTable<u32>,
}

/// `0..n` sorted by `key` (bytes, as `str::cmp` orders them), then by
/// index: what sorting the indices by `key(i).cmp(key(j)).then(i.cmp(&j))`
/// gives. The keys are compared seven bytes at a time as one word (see
/// [`key_chunk`]), each group of equal words again on its next seven: that
/// sort compared keys all over memory through their prints (217 M of
/// *wide*'s first 128 MiB's 6,864 M instructions).
fn order_by_key<'k>(n: u32, key: impl Fn(u32) -> &'k [u8]) -> Vec<u32> {
    let mut order: Vec<(u64, u32)> = (0..n).map(|i| (0, i)).collect();
    // Ranges of `order` whose keys share their first `depth` bytes.
    let mut todo = vec![(0, order.len(), 0)];
    while let Some((start, end, depth)) = todo.pop() {
        let group = &mut order[start..end];
        for e in group.iter_mut() {
            e.0 = key_chunk(key(e.1), depth);
        }
        group.sort_unstable();
        let mut first = 0;
        while first < group.len() {
            let chunk = group[first].0;
            let last = group[first..]
                .iter()
                .position(|e| e.0 != chunk)
                .map_or(group.len(), |n| first + n);
            // (A word of fewer than eight bytes ends its keys: equal keys,
            // in index order already.)
            if last - first > 1 && chunk & 0xff == 8 {
                todo.push((start + first, start + last, depth + 7));
            }
            first = last;
        }
    }
    order.into_iter().map(|(_, i)| i).collect()
}

/// `key[depth..]`'s next seven bytes (zero when it has fewer), big-endian
/// over how many bytes it has from `depth` (8 for more than seven). Two keys
/// equal up to `depth` compare as their words do: a key that ends first has
/// zeros where the other has bytes, or the same zeros and a smaller count.
/// Equal words with a count under 8 are equal keys; with 8, the keys go on.
fn key_chunk(key: &[u8], depth: usize) -> u64 {
    let rest = key.get(depth..).unwrap_or(&[]);
    let n = rest.len().min(7);
    let mut word = [0u8; 8];
    word[..n].copy_from_slice(&rest[..n]);
    u64::from_be_bytes(word) | rest.len().min(8) as u64
}

/// The hash of a print's key in [`ByKey`]'s index.
fn key_hash(key: &str) -> u64 {
    xxh64(key.as_bytes(), 0)
}

impl<'p> ByKey<'p> {
    fn new(prints: &'p [Print], keys: &'p str) -> ByKey<'p> {
        let key = |i: u32| prints[i as usize].key(keys);
        let order = order_by_key(prints.len() as u32, |i| key(i).as_bytes());
        let runs: Vec<u32> = (0..order.len())
            .filter(|&n| n == 0 || key(order[n]) != key(order[n - 1]))
            .map(|n| n as u32)
            .collect();
        let mut index = hashbrown::HashTable::with_capacity(runs.len());
        for (run, &start) in runs.iter().enumerate() {
            let hash = key_hash(key(order[start as usize]));
            // Keys of runs differ, so each run is a new entry.
            index.insert_unique(hash, run as u32, |&r| {
                key_hash(key(order[runs[r as usize] as usize]))
            });
        }
        ByKey {
            prints,
            keys,
            order,
            runs,
            index,
        }
    }

    fn key(&self, run: usize) -> &'p str {
        self.prints[self.order[self.runs[run] as usize] as usize].key(self.keys)
    }

    /// The first [`HOSTS_PER_PATH`] prints of the `run`th key, in reading order.
    fn list(&self, run: usize) -> &[u32] {
        let start = self.runs[run] as usize;
        let end = self
            .runs
            .get(run + 1)
            .map_or(self.order.len(), |&e| e as usize);
        &self.order[start..end.min(start + HOSTS_PER_PATH)]
    }

    /// The first [`HOSTS_PER_PATH`] prints with this key.
    fn get(&self, key: &str) -> &[u32] {
        match self
            .index
            .find(key_hash(key), |&run| self.key(run as usize) == key)
        {
            Some(&run) => self.list(run as usize),
            None => &[],
        }
    }
}

/// Calls `visit` with every pair of prints of two hosts that host aliases
/// compare, in a fixed order: the same key on two hosts (`a/x`, `b/x`; the
/// host read first as `a`), in the order of the keys, then a key under
/// another host's first segment (`u.h/x`, `h/u/x`, with the segment `u`).
fn alias_pairs<'p>(
    by_key: &ByKey<'p>,
    mut visit: impl FnMut(&'p Print, &'p Print, Option<&'p str>),
) {
    let prints = by_key.prints;
    for run in 0..by_key.runs.len() {
        let list = by_key.list(run);
        for (x, &i) in list.iter().enumerate() {
            for &j in &list[x + 1..] {
                let (a, b) = (&prints[i as usize], &prints[j as usize]);
                match a.host.cmp(&b.host) {
                    std::cmp::Ordering::Less => visit(a, b, None),
                    std::cmp::Ordering::Greater => visit(b, a, None),
                    std::cmp::Ordering::Equal => {}
                }
            }
        }
    }
    // The rest of a key when it is not a path already (`/u` → `/`),
    // written here rather than allocated per print.
    let mut slashed = String::new();
    for b in prints {
        let key = b.key(by_key.keys);
        let Some((seg, tail)) = segment_and_tail(key) else {
            continue;
        };
        let rest = if tail.is_empty() || tail.starts_with('?') {
            slashed.clear();
            slashed.push('/');
            slashed.push_str(tail);
            &slashed[..]
        } else {
            tail
        };
        for &i in by_key.get(rest) {
            let a = &prints[i as usize];
            if a.host != b.host {
                visit(a, b, Some(seg));
            }
        }
    }
}

/// `/u/x?q` → (`u`, `/x?q`); `/u` → (`u`, `/`).
fn first_segment(key: &str) -> Option<(&str, Cow<'_, str>)> {
    let (seg, tail) = segment_and_tail(key)?;
    // Borrowed when the rest is a path already (`/u/x` → `/x`): one call
    // per URL on the host aliases' pass.
    let tail = if tail.is_empty() || tail.starts_with('?') {
        Cow::Owned(format!("/{tail}"))
    } else {
        Cow::Borrowed(tail)
    };
    Some((seg, tail))
}

/// `/u/x?q` → (`u`, `/x?q`); `/u?q` → (`u`, `?q`): the first segment and
/// what follows it as it is.
fn segment_and_tail(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix('/')?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (seg, tail) = rest.split_at(end);
    (!seg.is_empty()).then_some((seg, tail))
}

/// An IP address rather than a name.
fn is_address(host: &str) -> bool {
    host.starts_with('[') || host.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// The verdicts on the pairs `rule` merges among `urls`: each URL it
/// changes is grouped with the URLs of the same result, and every member of
/// a group is compared with its most requested one (so n − 1 pairs per group,
/// linear in the URLs), once with the learning sides and once with the
/// confirming ones.
fn evaluate(urls: &[UrlEntry], rule: &Rule, followed: bool) -> (Tally, Tally) {
    // Grouping keys by their 64-bit hashes (8 bytes a URL where the keys
    // themselves took about 60): two keys of one host with one hash are as
    // likely as 2^-64 a pair.
    let hash = |key: &str| xxh64(key.as_bytes(), 0);
    let mut keys: Vec<u64> = Vec::with_capacity(urls.len());
    // (hashbrown's hasher: a lookup per URL and rule; the groups' order is
    // sorted away below.)
    let mut changed_keys: hashbrown::HashSet<u64> = hashbrown::HashSet::new();
    for u in urls {
        match rule.apply(u.target) {
            Some(t) => {
                let k = hash(&grouping_key(&t));
                changed_keys.insert(k);
                keys.push(k);
            }
            None => keys.push(hash(&grouping_key(u.target))),
        }
    }
    let mut groups: hashbrown::HashMap<u64, Vec<usize>> = hashbrown::HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        if changed_keys.contains(k) {
            groups.entry(*k).or_default().push(i);
        }
    }
    drop(keys);
    // A URL that only redirects has no size: for a redirect rule, or one
    // that redirects clients followed say, its redirects are the evidence.
    let redirect = followed || matches!(rule.family(), Family::Redirect | Family::Moved);
    let judge = |from: (&Side, &[WindowSize]), to: (&Side, &[WindowSize])| {
        if redirect {
            redirect_verdict(from, to)
        } else {
            verdict(from.0.part(from.1), to.0.part(to.1))
        }
    };
    let mut learn = Tally::default();
    let mut confirm = Tally::default();
    let mut sorted: Vec<_> = groups.into_values().filter(|g| g.len() > 1).collect();
    sorted.sort_unstable(); // a fixed order of examples
    for g in sorted {
        let anchor = *g
            .iter()
            .max_by(|&&x, &&y| {
                urls[x]
                    .hits
                    .cmp(&urls[y].hits)
                    .then_with(|| urls[y].target.cmp(urls[x].target))
            })
            .unwrap_or(&g[0]);
        let to = &urls[anchor];
        for &i in g.iter().filter(|&&i| i != anchor) {
            let from = &urls[i];
            let c = judge(
                (&from.learn, from.learn_windows()),
                (&to.learn, to.learn_windows()),
            );
            learn.record(&c, from.target, to.target);
            let c = judge(
                (&from.confirm, from.confirm_windows()),
                (&to.confirm, to.confirm_windows()),
            );
            confirm.record(&c, from.target, to.target);
        }
    }
    (learn, confirm)
}

/// A host's redirect hints, as the miner reads them.
#[derive(Debug, Default)]
struct HostHints {
    /// Between two targets (path on) of the host.
    pairs: Vec<HintPair>,
    /// From `http` to `https` of one target: distinct targets, redirects.
    to_https: (u64, u64),
}

/// The summary's redirect hints by host, as targets (path on), for the
/// host's mining. A redirect from `http` to `https` of one target says
/// nothing about paths: counted apart ([`scheme_finding`]).
fn hints_by_host(hints: &Hints) -> HashMap<String, HostHints> {
    let mut by_host: HashMap<String, HostHints> = HashMap::new();
    for h in hints.sorted() {
        let (from, to) = (
            String::from_utf8_lossy(h.from),
            String::from_utf8_lossy(h.to),
        );
        let host = by_host
            .entry(String::from_utf8_lossy(h.host).into_owned())
            .or_default();
        let (tf, tt) = (target_of(&from), target_of(&to));
        if tf == tt {
            if from.starts_with("http://") && to.starts_with("https://") {
                host.to_https.0 += 1;
                host.to_https.1 += h.count;
            }
            continue;
        }
        host.pairs.push(HintPair {
            from: tf.to_owned(),
            to: tt.to_owned(),
            count: h.count,
        });
    }
    by_host
}

/// Distinct targets a host's `http` → `https` redirects need to be reported.
const SCHEME_TARGETS: u64 = 2;

/// What the redirects from `http` to `https` of a host say: reported in the
/// evidence, not written. The rules file can say it (`+http-as-https`),
/// but the miner compares a host's targets without their scheme, so it has
/// no sizes of the two spellings apart to confirm it on; and a server that
/// sends `http` to `https` serves one page under both anyway.
fn scheme_finding(host: &str, (targets, redirects): (u64, u64)) -> Option<Finding> {
    (targets >= SCHEME_TARGETS).then(|| Finding {
        id: String::new(),
        host: host.to_owned(),
        rule: Rule::HttpAsHttps,
        decision: Decision::Rejected(format!(
            "{redirects} redirects from http to https of {targets} URLs: switch on \
             +http-as-https by hand if the dedup key should merge them (not mined: \
             the miner compares targets without their scheme)"
        )),
        proposals: targets,
        redirects,
        learn: Tally::default(),
        confirm: Tally::default(),
    })
}

/// Accepted, unverified and rejected findings per family.
fn family_counts(findings: &[Finding]) -> Vec<(Family, u64, u64, u64)> {
    let mut out: Vec<(Family, u64, u64, u64)> = Vec::new();
    for f in findings {
        let fam = f.rule.family();
        let i = match out.iter().position(|x| x.0 == fam) {
            Some(i) => i,
            None => {
                out.push((fam, 0, 0, 0));
                out.len() - 1
            }
        };
        match f.decision {
            Decision::Accepted => out[i].1 += 1,
            Decision::Unverified(_) => out[i].2 += 1,
            Decision::Rejected(_) => out[i].3 += 1,
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_compared_in_windows_the_log_has_enough_of() {
        let hourly = |hours: i64| (0..hours).map(|h| 1_790_812_800 + h * 3_600).collect();
        assert_eq!(window_step(&hourly(24)), 3_600, "one day: by hour");
        assert_eq!(
            window_step(&hourly(3 * 24)),
            6 * 3_600,
            "three days: by 6 hours"
        );
        assert_eq!(window_step(&hourly(14 * 24)), 86_400, "two weeks: by day");
        let daily: BTreeSet<i64> = (0..3).map(|d| 1_790_812_800 + d * 86_400).collect();
        assert_eq!(
            window_step(&daily),
            86_400,
            "never finer than the summary's"
        );
        let weekly: BTreeSet<i64> = (0..3).map(|w| 1_790_812_800 + w * 7 * 86_400).collect();
        let step = window_step(&weekly);
        assert!(
            weekly.iter().all(|w| w.div_euclid(step) * step == *w),
            "kept as they are"
        );
    }

    /// `sink::DayFold` gathers rows of a day once a worker's windows fall
    /// on [`DAYS_FOR_DAY_STEP`] days: every log's windows that do (any
    /// window of a day or less, the other windows anywhere, any count
    /// before or after) are compared by day.
    #[test]
    fn windows_on_enough_days_are_compared_by_day() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for case in 0..2_000 {
            let window = [2_700, 3_600, 1_800, 5_000, 21_600, 60, 86_400][case % 7];
            let per_day = DAY / window + 1;
            let mut windows = BTreeSet::new();
            let mut days = BTreeSet::new();
            while days.len() < DAYS_FOR_DAY_STEP {
                let day = next(60) as i64 - 30;
                let w =
                    (day * DAY).div_euclid(window) * window + window * next(per_day as u64) as i64;
                windows.insert(w);
                days.insert(w.div_euclid(DAY));
            }
            for _ in 0..next(40) {
                windows.insert((next(200) as i64 - 100) * window);
            }
            assert_eq!(window_step(&windows), DAY, "{windows:?}");
        }
        // One day fewer is not enough.
        let hourly: BTreeSet<i64> = (0..(DAYS_FOR_DAY_STEP as i64 - 1) * 24)
            .map(|h| h * 3_600)
            .collect();
        assert_ne!(window_step(&hourly), DAY);
    }

    #[test]
    fn targets_and_segments() {
        assert_eq!(target_of("https://h.example/a/b?x=1"), "/a/b?x=1");
        assert_eq!(target_of("https://h.example"), "/");
        assert_eq!(target_of("https://h.example?x"), "/");
        assert_eq!(target_of("/a?b"), "/a?b");
        // The first `://`, after colons that do not start one.
        assert_eq!(target_of("a:b:/c://h/x?y"), "/x?y");
        assert_eq!(target_of("x://"), "/");
        assert_eq!(target_of("x:/y"), "x:/y");
        assert_eq!(target_of("x:"), "x:");
        assert_eq!(target_of("https://h?a/b"), "/");
        assert_eq!(target_of("https://h.example/é?x://y"), "/é?x://y");
        assert_eq!(
            target_len(b"https://h.example/\xff/a"),
            "/\u{fffd}/a".len() as u64
        );
        assert_eq!(target_len(b"https://h.example/a"), 2);
        assert_eq!(first_segment("/u/x?q"), Some(("u", "/x?q".into())));
        assert_eq!(first_segment("/u"), Some(("u", "/".into())));
        assert_eq!(first_segment("/u?q=1"), Some(("u", "/?q=1".into())));
        assert_eq!(first_segment("/"), None);
        assert_eq!(segment_and_tail("/u?q=1"), Some(("u", "?q=1")));
        assert!(is_address("203.0.113.7"));
        assert!(is_address("[2001:db8::1]"));
        assert!(!is_address("corp.example"));
    }

    #[test]
    fn alias_pairs_join_a_host_with_a_segment_of_another() {
        // Host 0 has `/u`, `/u?q=1` and `/u/x`; host 1 has `/`, `/?q=1`
        // and `/x`: each of host 1's keys is host 0's under segment `u`
        // (a rest that is not a path gets its slash); no key is on both
        // hosts, so no pair is plain.
        let keys = "/u/u?q=1/u/x//?q=1/x";
        let spans = [
            (0, 0, 2),
            (0, 2, 8),
            (0, 8, 12),
            (1, 12, 13),
            (1, 13, 18),
            (1, 18, 20),
        ];
        let prints: Vec<Print> = spans
            .iter()
            .map(|&(host, from, to)| Print {
                host,
                key: (from, to),
                hits: 1,
                windows: 0,
                learned: 0,
                confirmed: 0,
                flags: [false; 6],
            })
            .collect();
        let by_key = ByKey::new(&prints, keys);
        let mut seen = Vec::new();
        alias_pairs(&by_key, |a, b, seg| {
            seen.push((a.key(keys), b.key(keys), seg));
        });
        seen.sort_unstable();
        assert_eq!(
            seen,
            [
                ("/", "/u", Some("u")),
                ("/?q=1", "/u?q=1", Some("u")),
                ("/x", "/u/x", Some("u")),
            ]
        );
    }

    /// The key scan copies its input as it is, finds the windows, and takes
    /// a file for sorted only when every key is readable and greater than
    /// the one before (a key twice would need merging too).
    #[test]
    fn key_scans_copy_and_tell_sorted_files() {
        let header = UrlSummary::header();
        let scan = |rows: &[&str]| {
            let text = format!("{header}{}", rows.concat());
            let mut copy = Vec::new();
            let scan = scan_keys(text.as_bytes(), "s.tsv", Some(&mut copy)).unwrap();
            assert_eq!(copy, text.as_bytes());
            (scan.sorted, scan.windows.into_iter().collect::<Vec<_>>())
        };
        let (a1, a2, b1) = ("a\t/x\t100\t1\n", "a\t/x\t200\t1\n", "b\t/\t-\t1\r\n");
        assert_eq!(scan(&[a1, a2, b1]), (true, vec![100, 200]));
        assert_eq!(scan(&[]), (true, vec![]));
        assert!(!scan(&[a2, a1, b1]).0);
        assert!(!scan(&[a1, a1]).0);
        assert!(!scan(&[a1, "a\t/y\tnoon\t1\n", b1]).0);
        assert!(!scan(&[a1, "a\t/y\n"]).0);
        let err = scan_keys(&b"not a summary\n"[..], "s.tsv", None).unwrap_err();
        assert!(err.to_string().contains("s.tsv:1:"), "{err}");
    }

    /// Prints grouped by key: each key's prints in reading order, at most
    /// HOSTS_PER_PATH of them, found by key; a key no print has, none.
    #[test]
    fn host_urls_become_url_entries_where_they_lie() {
        // The same size and alignment: `HostUrls::entries` collects in
        // place, with no second list of the host's URLs.
        use std::mem::{align_of, size_of};
        assert_eq!(size_of::<KeptUrl>(), size_of::<UrlEntry>());
        assert_eq!(align_of::<KeptUrl>(), align_of::<UrlEntry>());
        // Within the entry `URL_COST` counts.
        assert!(size_of::<UrlEntry>() as u64 <= URL_ENTRY_BYTES);
        let mut host = HostUrls::default();
        let sig = super::super::evidence::Signature {
            size: 900,
            strong: true,
            lo: 900,
            span: 0,
        };
        let w = |i| WindowSize::new(i, &sig).unwrap();
        let mut summary = UrlSummary::default();
        summary.add(Some(200), Some(900), None);
        host.push("/a?b=1", &summary, &summary, &[w(0), w(1)], &[w(5)]);
        host.push("/", &summary, &UrlSummary::default(), &[], &[]);
        let urls = host.entries();
        assert_eq!(urls.len(), 2);
        assert_eq!((urls[0].target, urls[1].target), ("/a?b=1", "/"));
        assert_eq!(urls[0].learn_windows(), [w(0), w(1)]);
        assert_eq!(urls[0].confirm_windows(), [w(5)]);
        assert_eq!(urls[0].hits, 2);
        assert_eq!((urls[1].hits, urls[1].windows.len()), (1, 0));
        assert_eq!(urls[1].confirm.sig, None);
        drop(urls);
        // Emptied for the next host.
        host.clear();
        assert!(host.entries().is_empty());
    }

    #[test]
    fn keys_are_ordered_as_str_orders_them() {
        let keys: Vec<&[u8]> = vec![
            b"/a/b/c/d/e/f/g/h",
            b"/a/b/c/d/e/f/g",
            b"/a/b/c/d",
            b"",
            b"/a/b/c/d/e/f/g/h",
            b"/a/b/c/d\0",
            b"/a/b/c/\0",
            b"/a/b/c/",
            b"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
            b"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/q",
            b"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
            b"/zzzzzzzzzzzzzzz",
            b"/a\xff",
            b"/a/b/c/d",
            b"/a/b/c/d/e/f/g\0",
        ];
        let n = keys.len() as u32;
        let mut want: Vec<u32> = (0..n).collect();
        want.sort_by(|&i, &j| keys[i as usize].cmp(keys[j as usize]).then(i.cmp(&j)));
        assert_eq!(order_by_key(n, |i| keys[i as usize]), want);
        assert_eq!(order_by_key(0, |i| keys[i as usize]), Vec::<u32>::new());
    }

    #[test]
    fn prints_by_key() {
        let mut keys = String::new();
        let mut prints = Vec::new();
        let names: Vec<String> = (0..60)
            .map(|n| ["/b", "/a", "/c"][n % 3].to_owned())
            .chain(["/a/x".to_owned(), "/x".to_owned()])
            .collect();
        for (n, k) in names.iter().enumerate() {
            let start = keys.len();
            keys.push_str(k);
            prints.push(Print {
                host: n as u32,
                key: (start, keys.len()),
                hits: 1,
                windows: 0,
                learned: 0,
                confirmed: 0,
                flags: [false; 6],
            });
        }
        let by_key = ByKey::new(&prints, &keys);
        assert_eq!(by_key.runs.len(), 5);
        let a: Vec<u32> = (0..HOSTS_PER_PATH as u32).map(|n| 1 + 3 * n).collect();
        assert_eq!(by_key.get("/a"), &a[..]);
        assert_eq!(by_key.get("/a/x"), &[60]);
        assert_eq!(by_key.get("/b")[..3], [0, 3, 6]);
        assert!(by_key.get("/").is_empty());
        assert!(by_key.get("/d").is_empty());
        // Pairs: 3 keys of 20 prints, 16 kept, then `/x` (host 61) as
        // `/a/x` (host 60) under `a`.
        let mut pairs = 0;
        let mut segments = Vec::new();
        alias_pairs(&by_key, |a, b, seg| match seg {
            None => {
                assert!(a.host < b.host);
                pairs += 1;
            }
            Some(seg) => segments.push((a.host, b.host, seg)),
        });
        assert_eq!(pairs, 3 * 16 * 15 / 2);
        assert_eq!(segments, [(61, 60, "a")]);
    }

    /// A page that grows by 200 bytes a day, and its view of yesterday
    /// (`?edition=yesterday`: on each day the size the page had the day
    /// before), on 20 pages: the page requested on days 1, 2, 5 and 6, the
    /// view on days 2, 3, 6 and 7, three times a day each. Pooled over each
    /// half of the log the two have the same sizes (the larger of two
    /// equally dense clusters: the page's day 2, the view's day 3), and a
    /// miner comparing them would learn `edition=yesterday` as a default;
    /// on day 2 and day 6, the days both are seen, their sizes differ by
    /// the day's growth, so nothing is learned.
    #[test]
    fn a_view_of_yesterday_is_not_the_page_of_today() {
        const DAY: i64 = 86_400;
        let start = 1_790_812_800;
        let mut rows = Vec::new();
        for n in 0..20u64 {
            let base = 10_000 + 1_000 * n;
            let mut row = |url: String, day: i64, size: u64| {
                rows.push(format!(
                    "h.example\thttps://h.example{url}\t{}\t3\t3\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t{size}\t{size}:3\t-",
                    start + day * DAY
                ));
            };
            for day in [1, 2, 5, 6] {
                row(format!("/live/{n}"), day, base + 200 * day as u64);
            }
            for day in [2, 3, 6, 7] {
                let url = format!("/live/{n}?edition=yesterday");
                row(url, day, base + 200 * (day as u64 - 1));
            }
        }
        rows.sort();
        let text = format!("{}{}\n", UrlSummary::header(), rows.join("\n"));
        let (findings, report) = mine_file(
            &mut std::io::Cursor::new(text.into_bytes()),
            "s.tsv",
            None,
            RowForm::Text,
            // Learned on the first half of the span (days 1 to 3).
            &MineOptions {
                learn: 0.5,
                ..MineOptions::default()
            },
            64 << 20,
        )
        .unwrap();
        assert_eq!((report.urls, report.learn_windows), (40, 3));
        for f in &findings {
            assert!(
                matches!(f.decision, Decision::Rejected(_)),
                "{} {:?}: {:?}",
                f.rule.describe(),
                f.decision,
                f.learn
            );
        }
    }

    /// `canonurl mine` on logs hands its summary to the miner in the binary
    /// form, its rows merged into the miner's window: the same findings,
    /// evidence and report as from the summary file of hourly rows, in
    /// fewer rows when the miner's window is longer than an hour.
    #[test]
    fn the_miners_own_summary_mines_as_the_summary_file() {
        use super::super::write;
        const HOUR: i64 = 3_600;
        let start = 1_790_812_800;
        // 10 days (compared by day), 3 days (by 6 hours), 5 hours (by hour).
        for (hours, apart, step) in [(240, 5, 86_400), (72, 2, 21_600), (5, 1, 3_600)] {
            let build = || {
                let mut table = SummaryTable::new(usize::MAX);
                let mut windows = BTreeSet::new();
                for n in 0..30u64 {
                    for h in (0..hours).step_by(apart) {
                        let w = start + h as i64 * HOUR;
                        windows.insert(w);
                        let size = 10_000 + 1_000 * n + h as u64 % 3;
                        for tail in ["", "index.html"] {
                            let url = format!("https://h.example/p/{n}/{tail}");
                            let key = Key {
                                host: b"h.example",
                                url: url.as_bytes(),
                                window: Some(w),
                            };
                            let client = format!("192.0.2.{}", h % 7);
                            let mut row = table.row(key).unwrap();
                            row.add(Some(200), Some(size), Some(client.as_bytes()));
                            row.add(Some(304), None, None);
                        }
                    }
                }
                (table, windows)
            };
            let mine = |file: Vec<u8>, scan, form| {
                let (findings, report) = mine_file(
                    &mut std::io::Cursor::new(file),
                    "s",
                    scan,
                    form,
                    &MineOptions::default(),
                    64 << 20,
                )
                .unwrap();
                let (mut rules, mut evidence) = (Vec::new(), Vec::new());
                write::rules_file(&findings, &mut rules).unwrap();
                write::evidence_file(&findings, &mut evidence).unwrap();
                (rules, evidence, format!("{report:?}"), report)
            };
            let mut text = Vec::new();
            let text_rows = table::finish_all(vec![build().0], &mut text).unwrap();
            let (table, windows) = build();
            let mut bin = Vec::new();
            let (scan, rows) = summary_for_mining(vec![table], windows, &mut bin).unwrap();
            assert_eq!(rows, text_rows);
            // The binary rows: one per URL and miner's window.
            let mut cursor = std::io::Cursor::new(&bin[..]);
            let (_, head) = read_head(&mut cursor, "s", None).unwrap();
            let mut binary_rows = 0u64;
            for_each_row_in(cursor, "s", head, RowForm::Binary, |key, _| {
                assert_eq!(key.window.map(|w| w.rem_euclid(step)), Some(0));
                binary_rows += 1;
                Ok(())
            })
            .unwrap();
            // 60 URLs, each in every window.
            let coarse: BTreeSet<i64> = build().1.iter().map(|w| w - w % step).collect();
            assert_eq!(text_rows, 60 * build().1.len() as u64);
            assert_eq!(binary_rows, 60 * coarse.len() as u64, "{step}");
            let from_text = mine(text, None, RowForm::Text);
            let from_bin = mine(bin, Some(scan), RowForm::Binary);
            assert_eq!(from_text.3.window_seconds, step as u64);
            assert!(from_text.3.accepted >= 1, "{}", from_text.2);
            assert!(from_text.0 == from_bin.0, "{step}");
            assert!(from_text.1 == from_bin.1, "{step}");
            assert_eq!(from_text.2, from_bin.2);
        }
    }

    /// `canonurl mine` on logs mines its tables as their rows are merged
    /// when the budget of `--memory` surely samples nothing: the same
    /// findings, evidence, report and summary rows as the summary it
    /// writes otherwise, whether the table spilled or not. The counts it
    /// plans by are at least the summary's (the same without spills);
    /// within a small `--memory` it leaves the tables, untouched, to the
    /// summary.
    #[test]
    fn tables_mine_as_the_summary_they_make() {
        use super::super::write;
        let start = 1_790_812_800;
        let build = |limit: usize| {
            let mut table = SummaryTable::with_seen(limit);
            let mut windows = BTreeSet::new();
            for day in 0..10i64 {
                let w = start + day * DAY;
                windows.insert(w);
                // 20 pages a host: 16 agreeing pairs pass --min-agreement.
                for n in 0..60u64 {
                    let host = format!("h{}.example", n % 3);
                    for tail in ["", "index.html"] {
                        let url = format!("https://{host}/p/{n}/{tail}");
                        let key = Key {
                            host: host.as_bytes(),
                            url: url.as_bytes(),
                            window: Some(w),
                        };
                        let size = 10_000 + 1_000 * n + day as u64 % 2;
                        for hour in [n as i64 % 5, 7] {
                            let client = format!("192.0.2.{}", (day + hour) % 9);
                            let mut row = table.row_seen(key, 1 << hour).unwrap();
                            row.add(Some(200), Some(size), Some(client.as_bytes()));
                        }
                    }
                }
            }
            (table, windows)
        };
        let text = |findings: &[Finding], report: &MineReport| {
            let (mut rules, mut evidence) = (Vec::new(), Vec::new());
            write::rules_file(findings, &mut rules).unwrap();
            write::evidence_file(findings, &mut evidence).unwrap();
            (rules, evidence, format!("{report:?}"))
        };
        let opts = MineOptions::default();
        for limit in [usize::MAX, 40_000] {
            let (table, windows) = build(limit);
            let mut bin = Vec::new();
            let (scan, rows) = summary_for_mining(vec![table], windows, &mut bin).unwrap();
            let exact = scan.hosts.clone();
            let mut cursor = std::io::Cursor::new(bin);
            let (findings, report) = mine_file(
                &mut cursor,
                "s",
                Some(scan),
                RowForm::Binary,
                &opts,
                64 << 20,
            )
            .unwrap();
            assert!(report.accepted >= 3, "{report:?}");
            let want = text(&findings, &report);

            let (mut table, windows) = build(limit);
            assert_eq!(table.spilled_rows > 0, limit != usize::MAX);
            let hosts = table.count_bound().unwrap().unwrap().hosts();
            assert_eq!(hosts.len(), exact.len());
            for (b, e) in hosts.iter().zip(&exact) {
                assert!(b.urls >= e.urls && b.bytes >= e.bytes && b.rows >= e.rows);
            }
            assert_eq!(limit == usize::MAX, hosts == exact, "{limit}");
            let (findings, report, mined_rows) =
                mine_tables(vec![table], windows, hosts, &opts, 64 << 20)
                    .ok()
                    .unwrap()
                    .unwrap();
            assert!(text(&findings, &report) == want, "{limit}");
            assert_eq!(mined_rows, rows);

            let (mut table, windows) = build(limit);
            let hosts = table.count_bound().unwrap().unwrap().hosts();
            let tight = 8_192;
            let Err(tables) = mine_tables(vec![table], windows.clone(), hosts, &opts, tight) else {
                panic!("mined within {tight} bytes");
            };
            let (_, left) = summary_for_mining(tables, windows, &mut Vec::new()).unwrap();
            assert_eq!(left, rows);
        }
    }

    /// The miner's tables past `--memory`: no sampling while the largest
    /// host and every print fit; past it, the prints get half and each
    /// host a level that fits it in the rest, small hosts none.
    #[test]
    fn the_budget_samples_only_what_does_not_fit() {
        let host = |urls: u64| Count {
            urls,
            bytes: 30 * urls,
            rows: 2 * urls,
        };
        let hosts = [host(1_000), host(1_000_000), host(10)];
        let plenty = Budget::plan(&hosts, 4 << 30);
        assert_eq!(
            (plenty.host_levels.as_slice(), plenty.print_level),
            (&[0, 0, 0][..], 0)
        );
        assert_eq!(plenty.prints.urls, 1_001_010);
        let tight = Budget::plan(&hosts, MEMORY_RESERVE + (64 << 20));
        assert_eq!(tight.host_levels[0], 0);
        assert_eq!(tight.host_levels[2], 0);
        assert!(
            tight.host_levels[1] > 0 && tight.print_level > 0,
            "{:?}",
            tight.host_levels
        );
        // What is kept fits: the largest host at its level with the prints.
        let limit = (64u64 << 20) as f64;
        let largest = 1e6 * (URL_COST + 30 + 16) as f64 / f64::from(1 << tight.host_levels[1]);
        let prints =
            1_001_010.0 * (PRINT_COST + 30 + 16) as f64 / f64::from(1 << tight.print_level);
        assert!(largest + prints <= limit, "{largest} + {prints}");
        // No room at all: each host at a level that keeps less than one of
        // its URLs in expectation, and no panic.
        let none = Budget::plan(&hosts, 0);
        for (c, &l) in hosts.iter().zip(&none.host_levels) {
            assert!(c.urls >> l == 0, "{l}");
        }
        assert!(none.prints.urls == 0 && none.print_level > 0);
    }

    /// Sampling keeps the spellings of one page together: the URLs of a
    /// host by their digits, the prints by their key or the key under
    /// another host's first segment.
    #[test]
    fn sampling_keeps_both_sides_of_a_pair() {
        assert_eq!(sample_hash("/story?id=7"), sample_hash("/story_7"));
        assert_eq!(sample_hash("/a/7/b/12"), sample_hash("/x-7.html?p=12"));
        assert_ne!(sample_hash("/story_7"), sample_hash("/story_8"));
        assert_ne!(sample_hash("/a/7/12"), sample_hash("/a/71/2"));
        for level in 1..5 {
            let mut kept_pages = 0;
            for n in 0..400 {
                let page = format!("/p/{n}.html");
                if kept(level, xxh64(page.as_bytes(), 0x9a11_a5e5)) {
                    kept_pages += 1;
                    // Kept by its own key: so is its copy on another host,
                    // and under another host's segment `u`.
                    assert!(print_kept(level, &page));
                    assert!(print_kept(level, &format!("/u{page}")), "{page}");
                }
            }
            // About one in 2^level.
            let want = 400 >> level;
            assert!(
                kept_pages > want / 2 && kept_pages < want * 2,
                "{level}: {kept_pages}"
            );
        }
        assert!(print_kept(0, "/anything"));
    }

    /// Mining within a small `--memory` leaves URLs out (and says how
    /// many); within a large one, none.
    #[test]
    fn mining_past_memory_samples_the_urls() {
        let mut rows = Vec::new();
        for n in 0..2_000u64 {
            for day in [0i64, 1] {
                let size = 10_000 + 37 * n;
                rows.push(format!(
                    "h.example\thttps://h.example/p/{n}\t{}\t3\t3\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t{size}\t{size}:3\t-",
                    1_790_812_800 + day * 86_400
                ));
            }
        }
        rows.sort();
        let text = format!("{}{}\n", UrlSummary::header(), rows.join("\n"));
        let mine = |memory: usize| {
            mine_file(
                &mut std::io::Cursor::new(text.as_bytes()),
                "s.tsv",
                None,
                RowForm::Text,
                &MineOptions::default(),
                memory,
            )
            .unwrap()
            .1
        };
        let all = mine(64 << 20);
        assert_eq!(
            (all.urls, all.sampled_urls, all.sampled_prints),
            (2_000, 0, 0)
        );
        let some = mine(600_000);
        assert!(some.sampled_urls > 0 && some.sampled_prints > 0, "{some:?}");
        assert_eq!(some.urls + some.sampled_urls, 2_000);
    }

    fn rewrite(regex: &str, replace: &str, agree: u64) -> Finding {
        Finding {
            id: String::new(),
            host: "h.example".into(),
            rule: Rule::Rewrite {
                family: Family::Substitution,
                regex: regex::Regex::new(regex).unwrap(),
                replace: replace.into(),
                slug: None,
            },
            decision: Decision::Accepted,
            proposals: 1,
            redirects: 0,
            learn: {
                let mut t = Tally::default();
                t.agree = agree;
                t
            },
            confirm: Tally::default(),
        }
    }

    fn entries<'a>(targets: &[&'a str]) -> Vec<UrlEntry<'a>> {
        targets
            .iter()
            .map(|t| UrlEntry {
                target: t,
                hits: 1,
                learn: Side::default(),
                confirm: Side::default(),
                windows: &[],
                learned: 0,
            })
            .collect()
    }

    /// Three spellings of one page, `/a-N` → `/b-N` → `/c-N`: applied
    /// once, in order, the file would leave `/b-N` for a second pass, so
    /// the rewrite with less support goes; rewrites that do not meet are
    /// all kept, and a rule whose output it rewrites itself goes too.
    #[test]
    fn rewrites_that_chain_keep_only_the_stronger() {
        let urls = entries(&["/a-1", "/b-2", "/c-3", "/d-4"]);
        let mut found = vec![
            rewrite(r"^/a-(\d+)$", "/b-${1}", 30),
            rewrite(r"^/b-(\d+)$", "/c-${1}", 20),
            rewrite(r"^/d-(\d+)$", "/e-${1}", 5),
        ];
        unchain(&mut found, &urls);
        assert_eq!(found[0].decision, Decision::Accepted);
        let Decision::Rejected(why) = &found[1].decision else {
            panic!("{:?}", found[1].decision)
        };
        assert!(why.contains("/b-1"), "{why}");
        assert_eq!(found[2].decision, Decision::Accepted);
        // The stronger one second: the first goes.
        let mut found = vec![
            rewrite(r"^/a-(\d+)$", "/b-${1}", 3),
            rewrite(r"^/b-(\d+)$", "/c-${1}", 20),
        ];
        unchain(&mut found, &urls);
        assert!(matches!(found[0].decision, Decision::Rejected(_)));
        assert_eq!(found[1].decision, Decision::Accepted);
        // A chain through another rule: the default `ref=a` taken away
        // after the first rewrite leaves what the second one takes.
        let mut found = vec![
            rewrite(r"^/a-(\d+)$", "/b?id=${1}&ref=a", 30),
            rewrite(r"^/b\?id=(\d+)$", "/c-${1}", 20),
            Finding {
                rule: Rule::DefaultParam {
                    prefix: "/".into(),
                    name: "ref".into(),
                    value: "a".into(),
                },
                ..rewrite("x", "y", 9)
            },
        ];
        unchain(&mut found, &urls);
        assert_eq!(found[0].decision, Decision::Accepted);
        assert!(matches!(found[1].decision, Decision::Rejected(_)));
        assert_eq!(found[2].decision, Decision::Accepted);
        // A rule that feeds itself.
        let mut found = vec![rewrite(r"^/a-(\d+)", "/a-0${1}", 9)];
        unchain(&mut found, &urls);
        assert!(matches!(found[0].decision, Decision::Rejected(_)));
    }
}
