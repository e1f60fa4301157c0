//! Canonicalizing an output again gives the same bytes, in both profiles.
#![no_main]

use canonurl::{Canonicalizer, Profile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for profile in [Profile::Whatwg, Profile::Rfc3986] {
        let mut c = Canonicalizer::new(profile);
        let mut once = Vec::new();
        if c.canonicalize_into(data, &mut once).is_err() {
            continue;
        }
        let mut twice = Vec::new();
        let r = c
            .canonicalize_into(&once, &mut twice)
            .expect("a canonical URL is accepted again");
        assert_eq!(once, twice, "{profile:?}");
        assert!(r.unchanged);
    }
});
