//! Learning a site's DUST rules from its access logs (`canonurl summarize`,
//! `canonurl mine`; the design is docs/mine.md).
//!
//! ```text
//! records ──▶ summary.rs  one row per (host, URL, window): counts, sizes, clients; exact merge
//!         ──▶ table.rs    rows within a memory budget: spilled runs, k-way merge (= summarize --merge)
//! ```

pub(crate) mod summary;
pub(crate) mod table;
