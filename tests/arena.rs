//! `Canonicalizer::canonicalize_in`: canonical URLs written into a bumpalo
//! arena, all alive at once, each equal to what `canonicalize_into` gives.

use canonurl::{Canonicalizer, Profile, Reason};

#[test]
fn arena_holds_every_url_and_matches_the_vec_api() {
    let inputs: [&[u8]; 6] = [
        b"HTTP://Example.COM:80/a/./b/../%7euser?q=%2f",
        b"https://example.com/already/canonical?x=1#top",
        b"http://[::FFFF:1.2.3.4]:8080/",
        b"mailto:%7Euser@example.com",
        b"http://exa<mple.com/",
        b"file:///C|/dir/../x",
    ];
    for profile in [Profile::Whatwg, Profile::Rfc3986] {
        let arena = bumpalo::Bump::new();
        let mut c = Canonicalizer::new(profile);
        let mut reference = Canonicalizer::new(profile);
        let mut held = Vec::new();
        for input in inputs {
            let mut expected = Vec::new();
            let want = reference.canonicalize_into(input, &mut expected);
            match (c.canonicalize_in(input, &arena), want) {
                (Ok((bytes, got)), Ok(want)) => {
                    assert_eq!(bytes, &expected[..], "{profile:?}");
                    assert_eq!(got, want);
                    assert!(got.parts.is_consistent(bytes));
                    held.push((bytes, expected));
                }
                (Err(got), Err(want)) => assert_eq!(got, want),
                (got, want) => panic!("{profile:?}: arena {got:?} vs vec {want:?}"),
            }
        }
        // Every slice handed out earlier is still intact.
        assert_eq!(held.len(), 5);
        for (bytes, expected) in &held {
            assert_eq!(*bytes, &expected[..]);
        }
        assert!(arena.allocated_bytes() > 0);
    }
    let mut c = Canonicalizer::new(Profile::Whatwg);
    let arena = bumpalo::Bump::new();
    let err = c.canonicalize_in(b"http://a:99999/", &arena).unwrap_err();
    assert_eq!(err.reason, Reason::PortOutOfRange);
}
