//! Why a URL was rejected, and where: the one error type of the
//! canonicalizer, whichever stage found the problem.
//!
//! Every failure of the WHATWG basic URL parser (`url/`) maps to one
//! [`Reason`], as do the input limit and a rewrite rule whose result does
//! not parse (`canon/`); the [`Reject`] adds the byte offset in the caller's
//! input (before tab/newline removal and trimming) where the problem was
//! found. It lives at the top of the crate, not in `url/`, because the
//! parser is not its only source.

use std::fmt;

/// Why an input is not a URL. `Copy`, so the hot path returns it by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// The input is longer than the configured maximum (default 64 KiB).
    InputTooLong,
    /// A relative reference was given but there is no base URL to resolve it against.
    MissingScheme,
    /// A relative reference other than a fragment against a base with an opaque path
    /// (`mailto:x` as base, `foo` as input).
    OpaqueBase,
    /// A host is required here but is empty (`http://`, `http://user@/`, `http://:80/`).
    HostMissing,
    /// The port contains something other than ASCII digits.
    InvalidPort,
    /// The port is larger than 65535.
    PortOutOfRange,
    /// The host contains a forbidden host code point (the byte is given).
    ForbiddenHostCodePoint(u8),
    /// A domain contains a forbidden domain code point, after percent-decoding (the byte is given).
    ForbiddenDomainCodePoint(u8),
    /// The host ends in a number but is not a valid IPv4 address.
    InvalidIpv4,
    /// The bracketed host is not a valid IPv6 address.
    InvalidIpv6,
    /// A host starts with `[` but does not end with `]`.
    UnclosedIpv6,
    /// The host (after percent-decoding) is not valid UTF-8.
    InvalidUtf8Host,
    /// UTS #46 ToASCII failed for the domain (bad punycode, disallowed code point, bidi, ...).
    IdnaFailure,
    /// The input is not a valid base URL (a relative reference, or rejected itself).
    InvalidBase,
    /// A user rewrite rule turned the URL into something that is not a URL
    /// (the offset is in the rewritten URL).
    InvalidRewrite,
}

impl Reason {
    /// A short, stable, machine-friendly name (used in statistics and TSV output).
    pub fn name(self) -> &'static str {
        match self {
            Reason::InputTooLong => "input-too-long",
            Reason::MissingScheme => "missing-scheme",
            Reason::OpaqueBase => "opaque-base",
            Reason::HostMissing => "host-missing",
            Reason::InvalidPort => "invalid-port",
            Reason::PortOutOfRange => "port-out-of-range",
            Reason::ForbiddenHostCodePoint(_) => "forbidden-host-code-point",
            Reason::ForbiddenDomainCodePoint(_) => "forbidden-domain-code-point",
            Reason::InvalidIpv4 => "invalid-ipv4",
            Reason::InvalidIpv6 => "invalid-ipv6",
            Reason::UnclosedIpv6 => "unclosed-ipv6",
            Reason::InvalidUtf8Host => "invalid-utf8-host",
            Reason::IdnaFailure => "idna-failure",
            Reason::InvalidBase => "invalid-base",
            Reason::InvalidRewrite => "invalid-rewrite",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reason::InputTooLong => f.write_str("input too long"),
            Reason::MissingScheme => f.write_str("relative reference without a base URL"),
            Reason::OpaqueBase => {
                f.write_str("relative reference against a base URL with an opaque path")
            }
            Reason::HostMissing => f.write_str("empty host"),
            Reason::InvalidPort => f.write_str("invalid port"),
            Reason::PortOutOfRange => f.write_str("port out of range"),
            Reason::ForbiddenHostCodePoint(b) => {
                write!(f, "forbidden host code point {}", ByteName(b))
            }
            Reason::ForbiddenDomainCodePoint(b) => {
                write!(f, "forbidden domain code point {}", ByteName(b))
            }
            Reason::InvalidIpv4 => f.write_str("invalid IPv4 address"),
            Reason::InvalidIpv6 => f.write_str("invalid IPv6 address"),
            Reason::UnclosedIpv6 => f.write_str("IPv6 address without closing ']'"),
            Reason::InvalidUtf8Host => f.write_str("host is not valid UTF-8"),
            Reason::IdnaFailure => f.write_str("domain to ASCII (UTS #46) failed"),
            Reason::InvalidBase => f.write_str("invalid base URL"),
            Reason::InvalidRewrite => f.write_str("a rewrite rule made the URL invalid"),
        }
    }
}

/// Prints a byte as `'<'` when printable ASCII, else as `0x0a`.
struct ByteName(u8);

impl fmt::Display for ByteName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_ascii_graphic() {
            write!(f, "'{}'", self.0 as char)
        } else {
            write!(f, "0x{:02x}", self.0)
        }
    }
}

/// A rejected input: the reason and the byte offset in the caller's input.
///
/// ```
/// use canonurl::{Canonicalizer, Profile, Reason};
///
/// let mut c = Canonicalizer::new(Profile::Whatwg);
/// let reject = c.canonicalize_into(b"no scheme here", &mut Vec::new()).unwrap_err();
/// assert_eq!(reject.reason, Reason::MissingScheme);
/// assert_eq!(reject.offset, 0);
/// assert_eq!(reject.reason.name(), "missing-scheme");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reject {
    /// What is wrong.
    pub reason: Reason,
    /// Byte offset into the input as the caller passed it.
    pub offset: usize,
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

impl std::error::Error for Reject {}
