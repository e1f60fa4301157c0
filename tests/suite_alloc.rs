//! Test suite: Allocation counts: a counting global allocator (tests/counting) for this binary alone, so no other test's allocations count.
//!
//! The integration tests are a few binaries of many modules (Cargo.toml: `autotests = false`
//! and one `[[test]]` per suite): each test binary of a release build pays a whole link-time
//! optimization of the library and its dependencies (about 36 CPU s each), so forty binaries
//! cost CI more than the tests themselves. Each module is the file of the same name in
//! `tests/`; `suite_command`'s `every_test_file_is_in_a_suite` fails when a file is in no
//! suite. Run one module: `cargo test --release --test suite_alloc alloc::`.

mod common;
mod counting;

mod alloc;
mod alloc_distinct;
mod alloc_logs;
