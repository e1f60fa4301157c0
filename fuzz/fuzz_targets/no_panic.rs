//! Arbitrary bytes through both profiles, with and without a base, through
//! both entry points: no panic, nothing appended on error, consistent parts.
#![no_main]

use canonurl::{Base, Canonicalizer, Profile};
use libfuzzer_sys::fuzz_target;

const BASES: [&[u8]; 4] = [
    b"http://example.org/foo/bar?q#f",
    b"file:///C:/dir/",
    b"sc://h/p",
    b"non-spec:/..//p",
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    let profile = if selector & 1 == 0 {
        Profile::Whatwg
    } else {
        Profile::Rfc3986
    };
    let mut c = Canonicalizer::new(profile);
    if selector & 2 != 0 {
        let base = Base::parse(BASES[(selector >> 2) as usize % BASES.len()]).expect("valid base");
        c = c.with_base(base);
    }
    let mut out = b"prefix".to_vec();
    let result = if selector & 0x40 != 0 {
        c.canonicalize_target(input, &mut out)
    } else {
        c.canonicalize_into(input, &mut out)
    };
    assert_eq!(&out[..6], b"prefix");
    match result {
        Ok(r) => {
            assert!(r.parts.is_consistent(&out[6..]));
            assert_eq!(r.unchanged, &out[6..] == input);
        }
        Err(e) => {
            assert_eq!(out.len(), 6, "appended on error");
            assert!(e.offset <= input.len().max(canonurl::DEFAULT_MAX_INPUT_LEN));
        }
    }
});
