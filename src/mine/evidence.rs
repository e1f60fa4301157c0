//! What the log says about two URLs being one page: size signatures, the
//! verdict on a pair, and the tally a candidate rule is accepted on
//! (docs/mine.md, stage 2).
//!
//! The server's own evidence is the size of its 200 responses and its
//! statuses. Sizes are compared **within a window** (a day by default): two
//! URLs whose 200 responses of one window have the same size (within a
//! tolerance for dynamic pages) agree in that window, clearly different
//! sizes of one window contradict in it. Content changes over time (a page
//! grows by its comments, a "yesterday" view has the size the page had the
//! day before), so sizes of different windows say nothing about each other.
//! A pair *agrees* when more of its shared windows agree than contradict,
//! and *contradicts* when at least as many contradict (and one does). A pair
//! with no window to compare in is compared across windows only when both
//! sides keep one size over time (the same size in two windows or more:
//! static pages; a page that grows by 50 bytes a day never does). A 200
//! against a 404 in the same part of the log is a *status contradiction*.
//! Everything else (no shared window with a 200 on both sides and a size
//! that changes, sizes near but not within tolerance, a size that many
//! unrelated URLs share) is *untestable*: it neither supports nor refutes a
//! rule.

use super::summary::{SizeCount, StatusClass, UrlSummary, SIZES_KEPT};

/// The size tolerance around `size`: exact is too strict for dynamic pages
/// (tokens, timestamps add a few bytes per response), so 16 bytes or 0.1 %,
/// whichever is larger.
pub(crate) fn tolerance(size: u64) -> u64 {
    (size / 1000).max(16)
}

/// A URL's size signature in one part of the log: where most of its 200
/// responses' sizes fall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Signature {
    /// The mean size of the densest cluster (sizes within one tolerance).
    pub size: u64,
    /// The cluster holds at least two responses: an aborted transfer (one
    /// odd, smaller size) cannot be it. A weak signature may agree but never
    /// contradicts.
    pub strong: bool,
    /// The smallest size in the cluster, and how far above it the largest
    /// is (at most one tolerance, so 32 bits hold it for any size below 4
    /// TB; past that it saturates): a one-off pair of URLs (a literal alias)
    /// must match on these exactly, not just within a tolerance. Kept small:
    /// mining holds two signatures per URL.
    pub lo: u64,
    pub span: u32,
}

impl Signature {
    /// The largest size in the cluster (`lo + span`).
    #[cfg(test)]
    pub(crate) fn hi(&self) -> u64 {
        self.lo + u64::from(self.span)
    }
}

/// A count in 32 bits, saturating: sides compare counts with 0 and with
/// `--min-hits`, and a URL with four billion responses in one part of a log
/// is past any such threshold.
fn count32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The sizes of `s` that can be the page's: a size seen once that is a
/// whole number of 4 KiB blocks below the URL's largest 200 size is a
/// transfer cut at a buffer's end (a client that went away), not the page.
pub(crate) fn page_sizes(s: &UrlSummary) -> impl Iterator<Item = SizeCount> + '_ {
    s.sizes().filter(move |&c| !is_cut_transfer(c, s.largest))
}

/// The densest run of sizes within one tolerance, by response count; ties go
/// to the larger sizes (aborted transfers are smaller than the page).
pub(crate) fn signature(sizes: impl Iterator<Item = SizeCount>) -> Option<Signature> {
    // Increasing size, at most a row's 16 (more only in tests).
    let sizes: smallvec::SmallVec<[SizeCount; 16]> = sizes.collect();
    signature_of(&sizes)
}

/// `signature(page_sizes(s))`, the page's sizes sorted in an array on the
/// stack: collected twice (the second time into a 256-byte `SmallVec`
/// moved on return) and grown on the heap past four sizes, they cost more
/// than the signature (about 330 instructions a window of *wide*).
pub(crate) fn page_signature(s: &UrlSummary) -> Option<Signature> {
    let mut by_size = [SizeCount { size: 0, count: 0 }; SIZES_KEPT];
    let Some(sizes) = s.sorted_sizes(&mut by_size) else {
        return signature(page_sizes(s)); // more sizes than a row keeps: tests only
    };
    let mut page = [SizeCount { size: 0, count: 0 }; SIZES_KEPT];
    let mut n = 0;
    for &c in sizes {
        if !is_cut_transfer(c, s.largest) {
            page[n] = c;
            n += 1;
        }
    }
    signature_of(&page[..n])
}

/// A size seen once that is a whole number of 4 KiB blocks below the URL's
/// largest (see [`page_sizes`]).
fn is_cut_transfer(c: SizeCount, largest: u64) -> bool {
    c.count == 1 && c.size < largest && c.size.is_multiple_of(4_096)
}

/// [`signature`] of sizes in increasing order.
fn signature_of(sizes: &[SizeCount]) -> Option<Signature> {
    let mut best: Option<(u64, usize, usize)> = None; // (count, first, last)
    let mut first = 0;
    let mut count = 0;
    for (last, s) in sizes.iter().enumerate() {
        count += s.count;
        while s.size - sizes[first].size > tolerance(s.size) {
            count -= sizes[first].count;
            first += 1;
        }
        if best.is_none_or(|(c, _, _)| count >= c) {
            best = Some((count, first, last));
        }
    }
    let (count, first, last) = best?;
    let weighted: u128 = sizes[first..=last]
        .iter()
        .map(|s| u128::from(s.size) * u128::from(s.count))
        .sum();
    Some(Signature {
        size: (weighted / u128::from(count.max(1))) as u64,
        strong: count >= 2,
        lo: sizes[first].size,
        span: count32(sizes[last].size - sizes[first].size),
    })
}

/// One URL in one part of the log (learning or confirming), as evidence sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Side {
    pub sig: Option<Signature>,
    /// 200 responses (saturating at `u32::MAX`, as the next two).
    pub ok: u32,
    /// 404 and 410 responses.
    pub gone: u32,
    /// Redirects (301, 302, 303, 307, 308).
    pub moved: u32,
    /// Its signature is shared by more than `--popular-size` URLs of its
    /// host: a template or a soft-404 page, no evidence.
    pub popular: bool,
}

impl Side {
    pub(crate) fn of(s: &UrlSummary) -> Side {
        Side {
            sig: page_signature(s),
            ok: count32(s.status[StatusClass::Ok200 as usize]),
            gone: count32(s.status[StatusClass::Gone as usize]),
            moved: count32(
                [
                    StatusClass::Moved301,
                    StatusClass::Found302,
                    StatusClass::SeeOther303,
                    StatusClass::Temporary307,
                    StatusClass::Permanent308,
                ]
                .iter()
                .map(|&c| s.status[c as usize])
                .sum(),
            ),
            popular: false,
        }
    }

    /// Answers only "not found" here.
    fn missing(&self) -> bool {
        self.ok == 0 && self.gone > 0
    }

    /// What a pair's verdict reads of this side, with its windows' sizes.
    pub(crate) fn part<'w>(&self, windows: &'w [WindowSize]) -> Part<'w> {
        Part {
            ok: self.ok > 0,
            missing: self.missing(),
            popular: self.popular,
            windows,
        }
    }
}

/// The 200 sizes of a URL in one window: the signature of that window's
/// sizes (its size and whether it is strong), with the window's index among
/// the summary's windows, in 64 bits (mining keeps one per URL and window,
/// up to [`WINDOWS_KEPT`] per part): the index in the top 24 bits, then the
/// strong bit, then the size in 39 bits (sizes from 512 GiB up and windows
/// past the 16,777,215th are not kept: no evidence, never a wrong one).
/// Ordered by window first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct WindowSize(u64);

/// Windows kept per URL and part of the log. Past it, the same windows are
/// kept for every URL (the smallest hashes of their indices), so two URLs
/// seen in the same windows are still compared in [`WINDOWS_KEPT`] of them.
pub(crate) const WINDOWS_KEPT: usize = 16;

impl WindowSize {
    const SIZE_BITS: u32 = 39;
    const WINDOW_BITS: u32 = 24;
    /// The largest window index kept.
    pub(crate) const MAX_WINDOW: u32 = (1 << Self::WINDOW_BITS) - 1;

    /// `None` when the window or the size does not fit (see the type).
    pub(crate) fn new(window: u32, sig: &Signature) -> Option<WindowSize> {
        (window <= Self::MAX_WINDOW && sig.size < 1 << Self::SIZE_BITS).then(|| {
            WindowSize(
                u64::from(window) << (Self::SIZE_BITS + 1)
                    | u64::from(sig.strong) << Self::SIZE_BITS
                    | sig.size,
            )
        })
    }

    pub(crate) fn window(self) -> u32 {
        (self.0 >> (Self::SIZE_BITS + 1)) as u32
    }

    pub(crate) fn size(self) -> u64 {
        self.0 & ((1 << Self::SIZE_BITS) - 1)
    }

    pub(crate) fn strong(self) -> bool {
        self.0 >> Self::SIZE_BITS & 1 == 1
    }
}

/// Keeps at most [`WINDOWS_KEPT`] of a URL's windows (`list` is in window
/// order, one entry per window, and stays so): all of them when they are
/// few, else those whose indices hash lowest, the same choice for every URL.
pub(crate) fn keep_windows(list: &mut Vec<WindowSize>) {
    if list.len() <= WINDOWS_KEPT {
        return;
    }
    list.sort_unstable_by_key(|w| (mix(u64::from(w.window())), w.window()));
    list.truncate(WINDOWS_KEPT);
    list.sort_unstable();
}

/// A fixed 64-bit mixer (splitmix64's finalizer).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// One URL in one part of the log as a pair's verdict reads it: its
/// statuses, whether its signature is a popular one, and its sizes per
/// window (in window order).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Part<'w> {
    /// Answers 200 in this part.
    pub ok: bool,
    /// Answers only 404/410 in this part.
    pub missing: bool,
    pub popular: bool,
    pub windows: &'w [WindowSize],
}

/// What one pair of URLs says about a rule that merges them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Agree,
    /// Both answer 200 with clearly different sizes.
    Contradict,
    /// One answers 200, the other only 404/410.
    StatusContradict,
    Untestable,
}

/// A pair's verdict, with the windows behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Compared {
    pub verdict: Verdict,
    /// Shared windows where the sizes agree, and where they contradict.
    pub agree: u32,
    pub contradict: u32,
    /// The two sides' sizes as the evidence file shows them: of the first
    /// window that agreed (for an agreeing pair) or contradicted (else),
    /// or a size of the side that answers 200.
    pub sizes: (Option<u64>, Option<u64>),
}

impl Compared {
    fn untestable() -> Compared {
        Compared {
            verdict: Verdict::Untestable,
            agree: 0,
            contradict: 0,
            sizes: (None, None),
        }
    }
}

/// One window's verdict on two sizes of it.
fn window_verdict(x: WindowSize, y: WindowSize, popular: bool) -> Verdict {
    let distance = x.size().abs_diff(y.size());
    let tol = tolerance(x.size().max(y.size()));
    if distance <= tol {
        if popular {
            Verdict::Untestable
        } else {
            Verdict::Agree
        }
    } else if distance > 2 * tol && x.strong() && y.strong() {
        Verdict::Contradict
    } else {
        Verdict::Untestable
    }
}

/// The windows two parts share, in window order, with each part's size in
/// it. (Indices, not slices that shrink: the slices cost more.)
struct Shared<'w> {
    a: &'w [WindowSize],
    b: &'w [WindowSize],
    i: usize,
    j: usize,
}

fn shared<'w>(a: Part<'w>, b: Part<'w>) -> Shared<'w> {
    Shared {
        a: a.windows,
        b: b.windows,
        i: 0,
        j: 0,
    }
}

impl Shared<'_> {
    /// The most windows that may still be shared.
    fn left(&self) -> usize {
        (self.a.len() - self.i).min(self.b.len() - self.j)
    }
}

impl Iterator for Shared<'_> {
    type Item = (WindowSize, WindowSize);

    fn next(&mut self) -> Option<(WindowSize, WindowSize)> {
        while let (Some(&x), Some(&y)) = (self.a.get(self.i), self.b.get(self.j)) {
            match x.window().cmp(&y.window()) {
                std::cmp::Ordering::Less => self.i += 1,
                std::cmp::Ordering::Greater => self.j += 1,
                std::cmp::Ordering::Equal => {
                    self.i += 1;
                    self.j += 1;
                    return Some((x, y));
                }
            }
        }
        None
    }
}

pub(crate) fn verdict(a: Part<'_>, b: Part<'_>) -> Compared {
    let first_size = |p: Part<'_>| p.windows.first().map(|w| w.size());
    if (a.ok && b.missing) || (b.ok && a.missing) {
        return Compared {
            verdict: Verdict::StatusContradict,
            sizes: (first_size(a), first_size(b)),
            ..Compared::untestable()
        };
    }
    let popular = a.popular || b.popular;
    let mut c = Compared::untestable();
    let mut first_agree = None;
    let mut first_contradict = None;
    for (x, y) in shared(a, b) {
        match window_verdict(x, y, popular) {
            Verdict::Agree => {
                c.agree += 1;
                first_agree.get_or_insert((x.size(), y.size()));
            }
            Verdict::Contradict => {
                c.contradict += 1;
                first_contradict.get_or_insert((x.size(), y.size()));
            }
            _ => {}
        }
    }
    if c.agree == 0 && c.contradict == 0 {
        return across_windows(a, b, popular);
    }
    let sizes = if c.agree > c.contradict {
        c.verdict = Verdict::Agree;
        first_agree
    } else if c.contradict > 0 {
        c.verdict = Verdict::Contradict;
        first_contradict
    } else {
        None
    };
    if let Some((x, y)) = sizes {
        c.sizes = (Some(x), Some(y));
    }
    c
}

/// Whether [`verdict`] says [`Verdict::Agree`], for callers that read
/// nothing else: no sizes kept, and the windows read only until the answer
/// is sure. A popular signature agrees in no window (see `window_verdict`),
/// so neither in a majority of them nor across them.
pub(crate) fn agrees(a: Part<'_>, b: Part<'_>) -> bool {
    if a.popular || b.popular || (a.ok && b.missing) || (b.ok && a.missing) {
        return false;
    }
    let (mut agree, mut contradict) = (0usize, 0usize);
    let mut windows = shared(a, b);
    while let Some((x, y)) = windows.next() {
        match window_verdict(x, y, false) {
            Verdict::Agree => agree += 1,
            Verdict::Contradict => contradict += 1,
            _ => {}
        }
        // At most `left` more windows are shared: once the lead of one
        // side is more than that, the rest cannot change the answer
        // (`verdict` agrees when more agree than contradict).
        let left = windows.left();
        if agree > contradict + left {
            return true;
        }
        if contradict > 0 && contradict >= agree + left {
            return false;
        }
    }
    if agree == 0 && contradict == 0 {
        // Agreeing across windows needs the two first windows to agree
        // (each side's first is its anchor or among the windows compared
        // with the other's anchor): most pairs fail that, and it costs
        // less than looking for a side that keeps its size.
        let firsts = a.windows.first().zip(b.windows.first());
        return firsts.is_some_and(|(&x, &y)| window_verdict(x, y, false) == Verdict::Agree)
            && agrees_across(a.windows, b.windows);
    }
    agree > contradict
}

/// Whether [`across_windows`] agrees on two sides with no popular
/// signature whose first windows agree: then two sides that keep their
/// size agree (their anchors are those first windows), else the other
/// side's windows must all agree with the one that keeps it.
fn agrees_across(a: &[WindowSize], b: &[WindowSize]) -> bool {
    let all_agree = |anchor: WindowSize, others: &[WindowSize]| {
        others
            .iter()
            .all(|&w| window_verdict(anchor, w, false) == Verdict::Agree)
    };
    match stable(a) {
        Some(x) => all_agree(x, b) || stable(b).is_some(),
        None => stable(b).is_some_and(|y| all_agree(y, a)),
    }
}

/// The verdict on a pair with no window to compare in: a side that keeps
/// one size over time (see [`stable`]) is compared with every window of the
/// other; all agree, agree; one contradicts, contradict. Two sides that
/// both change over time (a page that grows and its view of yesterday) say
/// nothing of each other.
fn across_windows(a: Part<'_>, b: Part<'_>, popular: bool) -> Compared {
    let mut c = Compared::untestable();
    let both;
    let (anchor, others, swapped) = match (stable(a.windows), stable(b.windows)) {
        (Some(x), Some(y)) => {
            both = [y];
            (x, &both[..], false)
        }
        (Some(x), None) => (x, b.windows, false),
        (None, Some(y)) => (y, a.windows, true),
        (None, None) => return c,
    };
    let verdicts = || others.iter().map(|&w| window_verdict(anchor, w, popular));
    if !others.is_empty() && verdicts().all(|v| v == Verdict::Agree) {
        c.verdict = Verdict::Agree;
    } else if verdicts().any(|v| v == Verdict::Contradict) {
        c.verdict = Verdict::Contradict;
    } else {
        return c;
    }
    let (x, y) = (Some(anchor.size()), others.first().map(|w| w.size()));
    c.sizes = if swapped { (y, x) } else { (x, y) };
    c
}

/// The size of a part that keeps one size over time: seen in two windows
/// at least, all within one tolerance of the first (a page that grows from
/// day to day is not one), as a strong signature when two windows show it.
fn stable(windows: &[WindowSize]) -> Option<WindowSize> {
    let (&first, rest) = windows.split_first()?;
    let same = |w: &WindowSize| w.size().abs_diff(first.size()) <= tolerance(first.size());
    if rest.is_empty() || !rest.iter().all(same) {
        return None;
    }
    Some(WindowSize(first.0 | 1 << WindowSize::SIZE_BITS))
}

/// The verdict on a redirect rule's pair: `from` only redirects and `to`
/// answers 200 agree (a redirect has no size to compare; the redirect is
/// the evidence); `to` only answering 404/410 contradicts; `from` answering
/// 200 with a size of its own is compared as any pair of pages is.
pub(crate) fn redirect_verdict(
    (from, from_windows): (&Side, &[WindowSize]),
    (to, to_windows): (&Side, &[WindowSize]),
) -> Compared {
    if from.ok > 0 {
        return verdict(from.part(from_windows), to.part(to_windows));
    }
    let to_size = to_windows.first().map(|w| w.size());
    if to.missing() {
        Compared {
            verdict: Verdict::StatusContradict,
            sizes: (None, to_size),
            ..Compared::untestable()
        }
    } else if from.moved > 0 && to.ok > 0 {
        Compared {
            verdict: Verdict::Agree,
            sizes: (None, to_size),
            ..Compared::untestable()
        }
    } else {
        Compared::untestable()
    }
}

/// Marks the sides whose signature more than `popular_size` sides share
/// (within tolerance).
pub(crate) fn mark_popular<'a>(sides: impl Iterator<Item = &'a mut Side>, popular_size: usize) {
    // Each side beside its size: sorting compares sizes in the vector, not
    // behind every side's pointer (sides of one size may swap: their
    // flags are the same).
    let mut sides: Vec<(u64, &mut Side)> = sides.filter_map(|s| Some((s.sig?.size, s))).collect();
    sides.sort_unstable_by_key(|(size, _)| *size);
    let sizes: Vec<u64> = sides.iter().map(|(size, _)| *size).collect();
    for ((_, side), &size) in sides.iter_mut().zip(&sizes) {
        let tol = tolerance(size);
        let lo = sizes.partition_point(|&s| s + tol < size);
        let hi = sizes.partition_point(|&s| s <= size + tol);
        side.popular = hi - lo > popular_size;
    }
}

/// Example pairs kept per candidate for the evidence file.
pub(crate) const EXAMPLES_KEPT: usize = 5;

/// The verdicts on every pair a candidate merges, in one part of the log.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    pub agree: u64,
    pub contradict: u64,
    pub status_contradict: u64,
    pub untestable: u64,
    /// Windows (of all the pairs) where the two sizes agree, and contradict.
    pub windows_agree: u64,
    pub windows_contradict: u64,
    /// The smallest signatures of the agreeing pairs, increasing, at most
    /// [`Tally::SIZES_KEPT`] (deduplicated within tolerance by
    /// [`Tally::distinct_sizes`]).
    sizes: Vec<u64>,
    /// A few pairs for the evidence file, contradictions first.
    pub examples: Vec<Example>,
}

/// A pair a candidate merges, with its verdict and signatures.
#[derive(Clone, Debug)]
pub(crate) struct Example {
    pub from: String,
    pub to: String,
    pub verdict: Verdict,
    pub size_from: Option<u64>,
    pub size_to: Option<u64>,
}

impl Tally {
    /// Enough to show `--min-sizes` (a few) is met, bounded.
    const SIZES_KEPT: usize = 64;

    /// Counts the pair of parts `a` and `b`; `names` gives their URLs
    /// (from, to), made only when the pair is kept as an example.
    pub(crate) fn add(
        &mut self,
        a: Part<'_>,
        b: Part<'_>,
        names: impl FnOnce() -> (String, String),
    ) {
        self.record_with(&verdict(a, b), names);
    }

    /// Counts the pair with the verdict `c` on it.
    pub(crate) fn record(&mut self, c: &Compared, from: &str, to: &str) {
        self.record_with(c, || (from.to_owned(), to.to_owned()));
    }

    /// [`Tally::record`] with the pair's URLs made by `names` when wanted:
    /// most pairs are not examples (the host aliases' pass compares
    /// hundreds of thousands of pairs).
    fn record_with(&mut self, c: &Compared, names: impl FnOnce() -> (String, String)) {
        let v = c.verdict;
        self.windows_agree += u64::from(c.agree);
        self.windows_contradict += u64::from(c.contradict);
        match v {
            Verdict::Agree => {
                self.agree += 1;
                if let Some(size) = c.sizes.0.or(c.sizes.1) {
                    // The smallest sizes, whatever the order pairs come in.
                    if let Err(i) = self.sizes.binary_search(&size) {
                        if i < Self::SIZES_KEPT {
                            self.sizes.insert(i, size);
                            self.sizes.truncate(Self::SIZES_KEPT);
                        }
                    }
                }
            }
            Verdict::Contradict => self.contradict += 1,
            Verdict::StatusContradict => self.status_contradict += 1,
            Verdict::Untestable => self.untestable += 1,
        }
        // Contradictions first in the examples: they say why a rule failed.
        let wanted = v != Verdict::Untestable
            && (self.examples.len() < EXAMPLES_KEPT
                || (v != Verdict::Agree
                    && self.examples.iter().any(|e| e.verdict == Verdict::Agree)));
        if wanted {
            if self.examples.len() == EXAMPLES_KEPT {
                if let Some(i) = self
                    .examples
                    .iter()
                    .position(|e| e.verdict == Verdict::Agree)
                {
                    self.examples.remove(i);
                }
            }
            let (from, to) = names();
            self.examples.push(Example {
                from,
                to,
                verdict: v,
                size_from: c.sizes.0,
                size_to: c.sizes.1,
            });
        }
    }

    /// Distinct agreeing signatures (sizes further apart than a tolerance).
    pub(crate) fn distinct_sizes(&self) -> u64 {
        let mut n = 0;
        let mut last: Option<u64> = None;
        for &s in &self.sizes {
            if last.is_none_or(|l| s - l > tolerance(s)) {
                n += 1;
                last = Some(s);
            }
        }
        n
    }

    /// Pairs that say yes or no.
    pub(crate) fn tested(&self) -> u64 {
        self.agree + self.contradict + self.status_contradict
    }

    /// The Wilson score interval's lower bound (95 %, z = 1.96) of agreeing
    /// pairs among the tested ones: small samples are not trusted as much as
    /// their ratio says.
    pub(crate) fn agreement_bound(&self) -> f64 {
        wilson_lower(self.agree, self.tested())
    }
}

pub(crate) fn wilson_lower(successes: u64, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    const Z: f64 = 1.96;
    let n = n as f64;
    let p = successes as f64 / n;
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * n);
    let margin = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - margin) / (1.0 + z2 / n)).max(0.0)
}

/// The acceptance thresholds (`canonurl mine --help` documents each default).
#[derive(Clone, Debug)]
pub struct Thresholds {
    /// Agreeing pairs a rule needs in the learning part (`--min-support`).
    pub min_support: u64,
    /// Distinct agreeing signatures a rule needs (`--min-sizes`): one shared
    /// size is what templates and soft 404s give.
    pub min_sizes: u64,
    /// The Wilson lower bound of agreement a rule needs (`--min-agreement`).
    pub min_agreement: f64,
    /// Agreeing pairs in the confirming part for a rule to be written active
    /// (`--min-confirm`).
    pub min_confirm: u64,
    /// More URLs of a host than this with one signature make it a template's
    /// or soft 404's size (`--popular-size`).
    pub popular_size: usize,
    /// URLs sharing one run of digits past this many form no substitution
    /// pairs (`--bucket-cap`): a common number, not an id; bounds the work
    /// per host.
    pub bucket_cap: usize,
    /// Candidates kept per host, the most supported first (`--max-candidates`).
    pub max_candidates: usize,
    /// 200 responses each side of a one-off pair needs in each part of the
    /// log (`--min-hits`): a literal alias rests on one pair only.
    pub min_hits: u64,
    /// Propose literal aliases at all (`--literal-aliases`; off by default:
    /// two different static pages of exactly one size look the same).
    pub literal_aliases: bool,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            min_support: 5,
            min_sizes: 3,
            min_agreement: 0.8,
            min_confirm: 3,
            popular_size: 16,
            bucket_cap: 64,
            max_candidates: 256,
            min_hits: 20,
            literal_aliases: false,
        }
    }
}

/// Why a candidate was not accepted on the learning part (`None`: accepted).
pub(crate) fn rejection(t: &Tally, th: &Thresholds) -> Option<String> {
    if t.status_contradict > 0 {
        return Some(format!(
            "{} pairs answer 200 against 404/410",
            t.status_contradict
        ));
    }
    if t.agree < th.min_support {
        return Some(format!(
            "support {} < --min-support {}",
            t.agree, th.min_support
        ));
    }
    let sizes = t.distinct_sizes();
    if sizes < th.min_sizes {
        return Some(format!(
            "{sizes} distinct agreeing sizes < --min-sizes {}",
            th.min_sizes
        ));
    }
    let bound = t.agreement_bound();
    if bound < th.min_agreement {
        return Some(format!(
            "agreement bound {bound:.3} < --min-agreement {} ({} agree, {} contradict)",
            th.min_agreement, t.agree, t.contradict
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(pairs: &[(u64, u64)]) -> Vec<SizeCount> {
        pairs
            .iter()
            .map(|&(size, count)| SizeCount { size, count })
            .collect()
    }

    fn side(size: u64, strong: bool) -> Side {
        Side {
            sig: Some(Signature {
                size,
                strong,
                lo: size,
                span: 0,
            }),
            ok: 3,
            ..Side::default()
        }
    }

    #[test]
    fn the_signature_is_the_densest_cluster_not_an_aborted_transfer() {
        // A page of ~20,000 bytes with jitter, and two aborted transfers.
        let s = signature(sizes(&[(312, 1), (9_000, 1), (20_000, 2), (20_010, 3)]).into_iter())
            .unwrap();
        assert!(s.strong);
        assert_eq!((s.size, s.lo, s.hi()), (20_006, 20_000, 20_010));
        // One response: a weak signature.
        let s = signature(sizes(&[(5_000, 1)]).into_iter()).unwrap();
        assert_eq!((s.size, s.strong), (5_000, false));
        // A tie between one aborted and one whole response goes to the larger.
        let s = signature(sizes(&[(100, 1), (5_000, 1)]).into_iter()).unwrap();
        assert_eq!(s.size, 5_000);
        assert_eq!(signature(std::iter::empty()), None);
    }

    /// Mining keeps two sides per URL (learning, confirming), for every URL
    /// of a host and for every URL of every host until host aliases are
    /// found: they stay small, and counts past 32 bits saturate.
    #[test]
    fn sides_are_small_and_their_counts_saturate() {
        assert!(
            std::mem::size_of::<Side>() <= 40,
            "{}",
            std::mem::size_of::<Side>()
        );
        let mut s = UrlSummary::default();
        s.status[StatusClass::Ok200 as usize] = 5_000_000_000;
        s.status[StatusClass::Found302 as usize] = 7;
        s.status[StatusClass::Moved301 as usize] = 2;
        let side = Side::of(&s);
        assert_eq!((side.ok, side.moved, side.gone), (u32::MAX, 9, 0));
    }

    /// Sizes per window: `(window, size, strong)`.
    fn windows(list: &[(u32, u64, bool)]) -> Vec<WindowSize> {
        list.iter()
            .map(|&(w, size, strong)| {
                let sig = Signature {
                    size,
                    strong,
                    lo: size,
                    span: 0,
                };
                WindowSize::new(w, &sig).unwrap()
            })
            .collect()
    }

    /// A part answering 200 with these sizes per window.
    fn page(w: &[WindowSize]) -> Part<'_> {
        Part {
            ok: true,
            windows: w,
            ..Part::default()
        }
    }

    #[test]
    fn window_sizes_pack_and_keep_the_same_windows_for_every_url() {
        let w = windows(&[
            (7, 123_456, true),
            (WindowSize::MAX_WINDOW, (1 << 39) - 1, false),
        ]);
        assert_eq!(
            (w[0].window(), w[0].size(), w[0].strong()),
            (7, 123_456, true)
        );
        assert_eq!(
            (w[1].window(), w[1].size(), w[1].strong()),
            (WindowSize::MAX_WINDOW, (1 << 39) - 1, false)
        );
        let sig = |size| Signature {
            size,
            strong: true,
            lo: size,
            span: 0,
        };
        assert_eq!(WindowSize::new(WindowSize::MAX_WINDOW + 1, &sig(5)), None);
        assert_eq!(WindowSize::new(0, &sig(1 << 39)), None);
        // Two URLs over 40 and 30 windows keep 16 each, the same ones where
        // they overlap (the windows they share hash the same).
        let mut a: Vec<WindowSize> = (0..40).flat_map(|w| windows(&[(w, 1_000, true)])).collect();
        let mut b: Vec<WindowSize> = (10..40)
            .flat_map(|w| windows(&[(w, 1_000, true)]))
            .collect();
        keep_windows(&mut a);
        keep_windows(&mut b);
        assert_eq!((a.len(), b.len()), (WINDOWS_KEPT, WINDOWS_KEPT));
        assert!(a.windows(2).all(|p| p[0].window() < p[1].window()));
        let in_b: Vec<u32> = a.iter().map(|w| w.window()).filter(|w| *w >= 10).collect();
        assert!(
            in_b.iter().all(|w| b.iter().any(|x| x.window() == *w)),
            "{a:?} {b:?}"
        );
        let mut few = windows(&[(3, 9, true), (5, 9, true)]);
        keep_windows(&mut few);
        assert_eq!(few.len(), 2);
    }

    /// A part of flags from the low bits of `f`: mostly answering 200,
    /// sometimes only 404/410, now and then popular.
    fn flagged(w: &[WindowSize], f: u64) -> Part<'_> {
        Part {
            ok: f & 3 != 0,
            missing: f & 3 == 0 && f & 4 != 0,
            popular: f & 15 == 15,
            windows: w,
        }
    }

    /// `agrees` answers as `verdict` does, on pairs of every kind: windows
    /// shared or not, few or many, sizes within, near and past the
    /// tolerance, weak and strong, popular, 200 against 404.
    #[test]
    fn agrees_answers_as_the_whole_verdict() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            state = mix(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            state % n
        };
        let (mut kinds, mut across) = ([0usize; 4], 0);
        for _ in 0..40_000 {
            let make = |next: &mut dyn FnMut(u64) -> u64| {
                let base = [100, 5_000, 10_000, 2_000_000][next(4) as usize];
                let count = next(9);
                // A third of the sides keep one size in every window.
                let fixed = next(3) == 0;
                let mut list: Vec<(u32, u64, bool)> = (0..count)
                    .map(|_| {
                        // Within the tolerance, near twice it, or far.
                        let step = [0, 3, 9, 15, 25, 40, 400][next(7) as usize];
                        let step = if fixed { 0 } else { step };
                        let size = base + step * (base / 1000).max(16) / 10;
                        (next(12) as u32, size, next(3) > 0)
                    })
                    .collect();
                list.sort_unstable_by_key(|w| w.0);
                list.dedup_by_key(|w| w.0);
                let flags = next(16);
                (windows(&list), flags)
            };
            let (wa, fa) = make(&mut next);
            let (wb, fb) = make(&mut next);
            let (a, b) = (flagged(&wa, fa), flagged(&wb, fb));
            let c = verdict(a, b);
            let whole = c.verdict;
            kinds[whole as usize] += 1;
            across += usize::from(whole == Verdict::Agree && c.agree == 0);
            assert_eq!(agrees(a, b), whole == Verdict::Agree, "{a:?} {b:?}");
        }
        // Every verdict came up often: the pairs were varied enough.
        assert!(kinds.iter().all(|&k| k > 1_000), "{kinds:?}");
        assert!(across > 100, "{across}");
    }

    #[test]
    fn verdicts() {
        let v = |a: &[(u32, u64, bool)], b: &[(u32, u64, bool)]| {
            let (a, b) = (windows(a), windows(b));
            verdict(page(&a), page(&b))
        };
        let agree = v(&[(0, 10_000, true)], &[(0, 10_010, false)]);
        assert_eq!(agree.verdict, Verdict::Agree);
        assert_eq!((agree.agree, agree.contradict), (1, 0));
        assert_eq!(agree.sizes, (Some(10_000), Some(10_010)));
        assert_eq!(
            v(&[(0, 10_000, true)], &[(0, 12_000, true)]).verdict,
            Verdict::Contradict
        );
        // A weak signature cannot contradict (it may be an aborted transfer).
        assert_eq!(
            v(&[(0, 10_000, true)], &[(0, 12_000, false)]).verdict,
            Verdict::Untestable
        );
        // No window in common: no evidence, even for equal sizes, unless
        // both keep one size over two windows or more (static pages).
        assert_eq!(
            v(&[(0, 10_000, true)], &[(1, 10_000, true)]).verdict,
            Verdict::Untestable
        );
        // One side keeps its size over two windows: the other side's
        // windows are compared with it.
        let one_stable = v(
            &[(0, 10_000, true)],
            &[(1, 10_000, true), (3, 10_005, false)],
        );
        assert_eq!(one_stable.verdict, Verdict::Agree);
        assert_eq!(one_stable.sizes, (Some(10_000), Some(10_000)));
        assert_eq!(
            v(
                &[(0, 10_000, true)],
                &[(1, 10_000, true), (3, 10_900, false)]
            )
            .verdict,
            Verdict::Untestable
        );
        assert_eq!(
            v(
                &[(0, 12_000, true)],
                &[(1, 10_000, true), (3, 10_000, false)]
            )
            .verdict,
            Verdict::Contradict
        );
        let across = v(
            &[(0, 10_000, false), (2, 10_004, false)],
            &[(1, 10_000, true), (3, 10_000, false)],
        );
        assert_eq!(across.verdict, Verdict::Agree);
        assert_eq!((across.agree, across.contradict), (0, 0));
        assert_eq!(
            v(
                &[(0, 10_000, false), (2, 10_000, false)],
                &[(1, 12_000, false), (3, 12_000, false)]
            )
            .verdict,
            Verdict::Contradict
        );
        // More windows agree than contradict: agree; a tie contradicts.
        let two_to_one = v(
            &[(0, 5_000, true), (1, 5_000, true), (2, 5_000, true)],
            &[(0, 5_000, true), (1, 5_000, true), (2, 9_000, true)],
        );
        assert_eq!(two_to_one.verdict, Verdict::Agree);
        assert_eq!((two_to_one.agree, two_to_one.contradict), (2, 1));
        let tie = v(
            &[(0, 5_000, true), (2, 5_000, true)],
            &[(0, 5_000, true), (2, 9_000, true)],
        );
        assert_eq!(tie.verdict, Verdict::Contradict);
        assert_eq!(tie.sizes, (Some(5_000), Some(9_000)));
        let gone = Part {
            missing: true,
            ..Part::default()
        };
        let w = windows(&[(0, 10_000, true)]);
        assert_eq!(verdict(page(&w), gone).verdict, Verdict::StatusContradict);
        let mut popular = page(&w);
        popular.popular = true;
        assert_eq!(verdict(popular, page(&w)).verdict, Verdict::Untestable);
        assert_eq!(
            verdict(Part::default(), page(&w)).verdict,
            Verdict::Untestable
        );
    }

    /// A page that grows by 200 bytes a day, and its yesterday's view (on
    /// each day the size the page had the day before): pooled over the
    /// days, their sizes are the same; day by day they are not. And two
    /// spellings of the growing page, requested on different days and on
    /// one day: they agree on the day they share, whatever the others say.
    #[test]
    fn sizes_that_change_over_time_are_compared_within_a_window() {
        let day = |d: u32, size: u64| (d, size, true);
        let page_days: Vec<_> = (1..6)
            .map(|d| day(d, 10_000 + 200 * u64::from(d)))
            .collect();
        let yesterday: Vec<_> = (1..6)
            .map(|d| day(d, 10_000 + 200 * u64::from(d - 1)))
            .collect();
        let (p, y) = (windows(&page_days), windows(&yesterday));
        let c = verdict(page(&p), page(&y));
        assert_eq!(c.verdict, Verdict::Contradict);
        assert_eq!((c.agree, c.contradict), (0, 5));
        // The same page, one spelling seen on days 1 to 3, the other on 3 to 5.
        let (a, b) = (windows(&page_days[..3]), windows(&page_days[2..]));
        let c = verdict(page(&a), page(&b));
        assert_eq!(c.verdict, Verdict::Agree);
        assert_eq!((c.agree, c.contradict), (1, 0));
        assert_eq!(c.sizes, (Some(10_600), Some(10_600)));
        // The page seen on days 1 and 2, its yesterday's view on days 3 and
        // 4 (sizes of days 2 and 3): no day in common, and neither keeps
        // one size, so nothing is compared across days.
        let (a, b) = (windows(&page_days[..2]), windows(&yesterday[2..4]));
        assert_eq!(verdict(page(&a), page(&b)).verdict, Verdict::Untestable);
    }

    #[test]
    fn a_redirect_agrees_with_a_page_not_with_a_missing_one() {
        let moved = Side {
            moved: 2,
            ..Side::default()
        };
        let gone = Side {
            gone: 1,
            ..Side::default()
        };
        let w = windows(&[(0, 9_000, true)]);
        let page_side = side(9_000, true);
        let agree = redirect_verdict((&moved, &[]), (&page_side, &w));
        assert_eq!(agree.verdict, Verdict::Agree);
        assert_eq!(agree.sizes, (None, Some(9_000)));
        assert_eq!(
            redirect_verdict((&moved, &[]), (&gone, &[])).verdict,
            Verdict::StatusContradict
        );
        assert_eq!(
            redirect_verdict((&moved, &[]), (&Side::default(), &[])).verdict,
            Verdict::Untestable
        );
        // A URL that answers 200 itself is compared by size.
        let small = windows(&[(0, 1_000, true)]);
        assert_eq!(
            redirect_verdict((&side(1_000, true), &small), (&page_side, &w)).verdict,
            Verdict::Contradict
        );
    }

    #[test]
    fn a_size_many_urls_share_is_popular() {
        let mut sides: Vec<Side> = (0..5).map(|_| side(4_321, true)).collect();
        sides.push(side(9_000, true));
        mark_popular(sides.iter_mut(), 4);
        assert!(sides[..5].iter().all(|s| s.popular));
        assert!(!sides[5].popular);
        mark_popular(sides.iter_mut(), 5);
        assert!(sides.iter().all(|s| !s.popular));
    }

    #[test]
    fn a_transfer_cut_at_a_block_is_not_the_page() {
        let mut u = UrlSummary::default();
        for _ in 0..3 {
            u.add(Some(200), Some(9_000), None);
        }
        u.add(Some(200), Some(8_192), None);
        let kept = |u: &UrlSummary| page_sizes(u).map(|c| c.size).collect::<Vec<_>>();
        assert_eq!(kept(&u), [9_000]);
        // Seen twice, it is a size the page has.
        u.add(Some(200), Some(8_192), None);
        assert_eq!(kept(&u), [8_192, 9_000]);
        // The largest size is never a cut.
        let mut one = UrlSummary::default();
        one.add(Some(200), Some(4_096), None);
        assert_eq!(kept(&one), [4_096]);
        // Another size seen once stays: a page's size may change.
        u.add(Some(200), Some(7_000), None);
        assert!(kept(&u).contains(&7_000));
    }

    #[test]
    fn the_page_signature_is_the_signature_of_the_page_sizes() {
        let mut u = UrlSummary::default();
        let same = |u: &UrlSummary| {
            assert_eq!(page_signature(u), signature(page_sizes(u)));
        };
        same(&u); // no size: none
                  // Sizes in no order, cut transfers among them, past the four a
                  // `SmallVec` held inline, up to a row's sixteen and past (sampled).
        for (n, size) in [9_000, 8_192, 20_000, 4_096, 20_010, 9_005, 12_288, 700]
            .into_iter()
            .cycle()
            .zip(1..)
            .map(|(s, n)| (n, s + (n / 8) * 37))
            .take(40)
        {
            u.add(Some(200), Some(size), None);
            if n % 3 == 0 {
                u.add(Some(200), Some(size), None);
            }
            same(&u);
        }
        assert!(page_signature(&u).is_some());
    }

    #[test]
    fn the_wilson_bound_distrusts_small_samples() {
        assert_eq!(wilson_lower(0, 0), 0.0);
        assert!(wilson_lower(5, 5) < 0.6);
        assert!(wilson_lower(16, 16) > 0.8);
        assert!(wilson_lower(100, 100) > 0.96);
        assert!(wilson_lower(90, 100) < 0.9);
        assert!(wilson_lower(90, 100) > 0.8);
    }

    /// The URLs of the pairs the tests count.
    fn ab() -> (String, String) {
        ("a".to_owned(), "b".to_owned())
    }

    #[test]
    fn acceptance_needs_support_sizes_and_agreement() {
        let th = Thresholds::default();
        let mut t = Tally::default();
        for i in 0..20 {
            let w = windows(&[(0, 1_000 + 100 * (i % 4), true), (1, 1_000, true)]);
            t.add(page(&w), page(&w), ab);
        }
        assert_eq!(t.distinct_sizes(), 4);
        assert_eq!(
            (t.agree, t.windows_agree, t.windows_contradict),
            (20, 40, 0)
        );
        assert_eq!(rejection(&t, &th), None);
        let mut one_size = Tally::default();
        let w = windows(&[(0, 4_321, true)]);
        for _ in 0..20 {
            one_size.add(page(&w), page(&w), ab);
        }
        assert!(rejection(&one_size, &th).unwrap().contains("--min-sizes"));
        let gone = Part {
            missing: true,
            ..Part::default()
        };
        t.add(page(&w), gone, ab);
        assert!(rejection(&t, &th).unwrap().contains("404"));
        assert!(t
            .examples
            .iter()
            .any(|e| e.verdict == Verdict::StatusContradict
                && (e.from.as_str(), e.to.as_str()) == ("a", "b")));
    }
}
