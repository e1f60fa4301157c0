//! Once its buffers are warm, a `Canonicalizer` makes no heap allocation per
//! URL. A counting global allocator (its own test binary) checks this over a
//! real URL list, in both profiles.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use canonurl::{Canonicalizer, Profile};
use common::{read_lines, shared_data_or_skip};

/// Wraps the system allocator and counts allocations made by threads that
/// switched counting on (so the test harness's own threads do not count).
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note_allocation() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the same arguments, which
// upholds the `GlobalAlloc` contract; counting touches no allocator state.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller's guarantees for `layout` are passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: `ptr` and `layout` come from this allocator, i.e. from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` and `layout` come from this allocator, i.e. from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Tests that count run one at a time, so that the global counter sees only
/// one of them.
static SERIAL: Mutex<()> = Mutex::new(());

/// Allocations made by this thread while running `f`.
fn count_allocations(f: impl FnOnce()) -> usize {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

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

#[test]
fn no_allocation_per_url_once_warm() {
    let Some(data) = shared_data_or_skip("no_allocation_per_url_once_warm") else {
        return;
    };
    // Everything is read into memory before counting starts.
    let all = read_lines(&data.join("url-dataset/kasztp.txt"));
    let lines: Vec<&[u8]> = all
        .iter()
        .map(Vec::as_slice)
        .filter(|l| !may_need_idna(l))
        .collect();
    println!(
        "alloc: {} of {} kasztp lines used ({} skipped: host may need IDNA)",
        lines.len(),
        all.len(),
        all.len() - lines.len()
    );
    assert!(lines.len() > 1000, "too few lines left: {}", lines.len());

    for profile in [Profile::Whatwg, Profile::Rfc3986] {
        let mut c = Canonicalizer::new(profile);
        let mut out = Vec::new();
        let mut accepted = 0usize;
        let mut pass = |accepted: &mut usize| {
            for line in &lines {
                out.clear();
                *accepted += usize::from(c.canonicalize_into(line, &mut out).is_ok());
            }
        };
        pass(&mut accepted); // warm-up: buffers grow to the largest URL
        let warm_accepted = accepted;
        accepted = 0;
        let allocations = count_allocations(|| pass(&mut accepted));
        println!(
            "alloc ({}): {allocations} allocation(s) in the second pass over {} lines ({accepted} accepted)",
            profile.name(),
            lines.len()
        );
        assert_eq!(accepted, warm_accepted, "the two passes disagree");
        // Without accepted URLs the check would be vacuous.
        assert!(accepted * 2 > lines.len(), "only {accepted} lines accepted");
        assert_eq!(allocations, 0, "{} allocated once warm", profile.name());
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
