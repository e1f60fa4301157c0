//! Test suite: The library: the URL Standard's tests, the peers' vectors, the RFC 3986 profile, the dedup rules, idempotence, differential and random tests.
//!
//! The integration tests are a few binaries of many modules (Cargo.toml: `autotests = false`
//! and one `[[test]]` per suite): each test binary of a release build pays a whole link-time
//! optimization of the library and its dependencies (about 36 CPU s each), so forty binaries
//! cost CI more than the tests themselves. Each module is the file of the same name in
//! `tests/`; `suite_command`'s `every_test_file_is_in_a_suite` fails when a file is in no
//! suite. Run one module: `cargo test --release --test suite_canon arena::`.

mod common;

mod arena;
mod differential;
mod fuzz_regressions;
mod idempotence;
mod random;
mod rfc3986_grammar;
mod rfc3986_profile;
mod rfc3986_resolution;
mod rules;
mod rules_scoped;
mod urlcanon;
mod urlcanon_dedup;
mod urlcanon_surt;
mod wpt;
