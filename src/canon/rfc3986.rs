//! RFC 3986 §6.2.2 escape normalization (stub).
use crate::url::parts::Parts;

/// Upper-cases escape hex digits and decodes escaped unreserved characters in
/// `out[start..]`, fixing `parts`.
pub fn normalize_escapes(_out: &mut Vec<u8>, _start: usize, _parts: &mut Parts) {}
