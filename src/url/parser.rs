//! The WHATWG basic URL parser, over bytes, writing the serialization directly.
//! (stub: being written)

use super::parts::Parts;
use super::reject::{Reason, Reject};

/// How the input is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A URL or relative reference, exactly as the URL Standard parses it.
    Url,
    /// An HTTP request target: as `Url`, but without a base an origin-form
    /// target is written as path and query only.
    Target,
}

/// Reused buffers.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    /// The input with tabs and newlines removed, when it had any.
    pub cleaned: Vec<u8>,
    /// Percent-decoded host bytes.
    pub host: Vec<u8>,
    /// Output buffer for `canonicalize_in`.
    pub arena_out: Vec<u8>,
}

/// Parses `input` (resolved against `base` if given) and appends its
/// serialization to `out`.
pub fn parse(
    input: &[u8],
    _base: Option<(&[u8], &Parts)>,
    _mode: Mode,
    _out: &mut Vec<u8>,
    _scratch: &mut Scratch,
) -> Result<Parts, Reject> {
    Err(Reject { reason: Reason::MissingScheme, offset: input.len() * 0 })
}
