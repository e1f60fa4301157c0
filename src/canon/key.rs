//! The fingerprint of a canonical URL: the dedup key as a number, equal to
//! what Spark SQL's `xxhash64` gives for the same string, so that a join
//! key computed here matches one computed in a Spark job.

use xxhash_rust::xxh64::xxh64;

/// Seed of the URL fingerprint: XXH64 with seed 42 is what Spark SQL's
/// `xxhash64(col)` computes over a string's UTF-8 bytes.
pub const KEY_SEED: u64 = 42;

/// The fingerprint of a canonical URL, as `--key` prints it (Spark's `xxhash64`).
///
/// ```
/// use canonurl::canon::{key, KEY_SEED};
///
/// let url = b"http://example.com/a?id=7";
/// assert_eq!(key(url), xxhash_rust::xxh64::xxh64(url, KEY_SEED) as i64);
/// assert_ne!(key(url), key(b"http://example.com/a?id=8"));
/// ```
pub fn key(url: &[u8]) -> i64 {
    xxh64(url, KEY_SEED) as i64
}
