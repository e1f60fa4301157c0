//! Test suite: Beyond the command: the Python package (pytest over its wheel) and the Spark examples.
//!
//! The integration tests are a few binaries of many modules (Cargo.toml: `autotests = false`
//! and one `[[test]]` per suite): each test binary of a release build pays a whole link-time
//! optimization of the library and its dependencies (about 36 CPU s each), so forty binaries
//! cost CI more than the tests themselves. Each module is the file of the same name in
//! `tests/`; `suite_command`'s `every_test_file_is_in_a_suite` fails when a file is in no
//! suite. Run one module: `cargo test --release --test suite_bindings python::`.

mod common;

mod python;
mod spark;
