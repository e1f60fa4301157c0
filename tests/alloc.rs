//! Once its buffers are warm, a `Canonicalizer` makes no heap allocation per
//! URL. A counting global allocator (its own test binary) checks this over a
//! real URL list, in both profiles.

mod common;
mod counting;

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
