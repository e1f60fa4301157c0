//! On valid UTF-8, canonurl `whatwg` against ada-url (which follows the WPT)
//! and the `url` crate: the same href, or all reject. Where the two
//! references disagree with each other, canonurl must agree with ada, except
//! for the host classes where ada's IDNA is known to differ from UTS #46 as
//! the `idna` crate implements it (see tests/random.rs); those inputs are
//! skipped here when `url` agrees with canonurl.
#![no_main]

use canonurl::{Canonicalizer, Profile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let mut c = Canonicalizer::new(Profile::Whatwg);
    let mut out = Vec::new();
    let ours = c
        .canonicalize_into(data, &mut out)
        .ok()
        .map(|_| String::from_utf8(out).expect("UTF-8 in, UTF-8 out"));
    let ada = ada_url::Url::parse(input, None)
        .ok()
        .map(|u| u.href().to_string());
    if ours == ada {
        return;
    }
    let url = url::Url::parse(input).ok().map(|u| u.to_string());
    // Non-ASCII hosts: ada's IDNA and the idna crate's differ on some
    // Unicode data and bidi cases; the `url` crate uses the same idna crate.
    let non_ascii = !input.is_ascii();
    if non_ascii && url == ours {
        return;
    }
    panic!("input {input:?}: canonurl {ours:?}, ada {ada:?}, url {url:?}");
});
