//! # canonurl
//!
//! Fast, byte-level URL canonicalization for web-server access logs.
//!
//! canonurl takes the raw bytes of a URL (or of a relative reference plus a
//! base URL) and appends its canonical form to a caller-owned buffer, with no
//! heap allocation per URL once the buffers are warm.
//!
//! ## Profiles
//!
//! - [`Profile::Whatwg`]: exactly the href that the WHATWG URL Standard's basic
//!   URL parser and serializer produce; rejected exactly where that parser fails.
//! - [`Profile::Rfc3986`]: `Whatwg` plus RFC 3986 §6.2.2 normalization that keeps
//!   the meaning: hex digits of percent-escapes upper-cased, escaped unreserved
//!   characters decoded. Reserved escapes (`%2F`, `%3F`, `%23`, ...) stay.
//!
//! ## Example
//!
//! ```
//! use canonurl::{Canonicalizer, Profile};
//!
//! let mut c = Canonicalizer::new(Profile::Rfc3986);
//! let mut out = Vec::new();
//! let r = c.canonicalize_into(b"HTTP://Example.COM:80/a/./b/../%7euser?q=%2f", &mut out).unwrap();
//! assert_eq!(out, b"http://example.com/a/~user?q=%2F");
//! assert_eq!(r.parts.host(&out), Some(&b"example.com"[..]));
//! assert!(!r.unchanged);
//! ```
//!
//! ## Bytes that are not UTF-8
//!
//! Log bytes are not always UTF-8. canonurl never replaces invalid bytes with
//! U+FFFD: in userinfo, path, query and fragment, every byte of 0x80 or above
//! is percent-encoded as itself (`\xFF` becomes `%FF`), which for valid UTF-8
//! is exactly what the URL Standard does, and for invalid UTF-8 keeps the bytes
//! recoverable. A host that is not valid UTF-8 is rejected.
//!
//! ## Pipeline
//!
//! ```text
//! bytes --> url::parser (WHATWG state machine, fast path for canonical http(s))
//!       --> url::host (domain / IPv4 / IPv6 / opaque; IDNA slow path)
//!       --> canon::rfc3986 (escape normalization, rfc3986 profile only)
//!       --> caller's Vec<u8> or bumpalo arena, with Parts offsets
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod canon;
pub mod url;

pub use canon::{Base, Canonical, Canonicalizer, Profile, DEFAULT_MAX_INPUT_LEN};
pub use url::parts::{Parts, ABSENT};
pub use url::reject::{Reason, Reject};
