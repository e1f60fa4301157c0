//! Where each component of a canonical URL lies in the output bytes.
//!
//! The offsets are documented on [`Parts`], which the crate's root exports.

/// Marks an absent component.
pub const ABSENT: u32 = u32::MAX;

/// Component offsets of one canonical URL.
///
/// Offsets are `u32`, relative to the first byte of this URL in the output
/// buffer (not to the start of the buffer), and [`ABSENT`] marks a component
/// that does not exist. For `https://user:pass@example.com:8080/a/b?q=1#top`:
///
/// ```text
/// https://user:pass@example.com:8080/a/b?q=1#top
///      |  |   ||   ||          |    |    |   |
///      |  |   ||   ||          |    |    |   fragment_start (the '#')
///      |  |   ||   ||          |    |    query_start (the '?')
///      |  |   ||   ||          |    path_start
///      |  |   ||   ||          host_end
///      |  |   ||   |host_start
///      |  |   ||   password_end
///      |  |   |password_start
///      |  |   username_end
///      |  username_start
///      scheme_end (the ':')
/// ```
///
/// Invariants (checked by [`Parts::is_consistent`]): the offsets that are
/// present never decrease in the order above, and all are `<= len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    /// Offset of the `:` that ends the scheme; `ABSENT` in path-only output.
    pub scheme_end: u32,
    /// Start of the username (just after `//`); `ABSENT` when the host is null.
    pub username_start: u32,
    /// End of the username (equal to `username_start` when empty).
    pub username_end: u32,
    /// Start of the password (after `:`); equal to `password_end` when empty.
    pub password_start: u32,
    /// End of the password.
    pub password_end: u32,
    /// Start of the host (an IPv6 host includes its brackets); `ABSENT` when null.
    pub host_start: u32,
    /// End of the host.
    pub host_end: u32,
    /// The port number, `ABSENT` when null (missing or the scheme's default).
    pub port: u32,
    /// Start of the path (of the opaque path when `opaque_path`).
    pub path_start: u32,
    /// Offset of the `?` that starts the query, `ABSENT` when the query is null.
    pub query_start: u32,
    /// Offset of the `#` that starts the fragment, `ABSENT` when null.
    pub fragment_start: u32,
    /// Length in bytes of the whole canonical URL.
    pub len: u32,
    /// The scheme is special (http, https, ws, wss, ftp, file).
    pub special: bool,
    /// The URL has an opaque path (`mailto:x`, `data:...`).
    pub opaque_path: bool,
}

impl Default for Parts {
    fn default() -> Self {
        Parts {
            scheme_end: ABSENT,
            username_start: ABSENT,
            username_end: ABSENT,
            password_start: ABSENT,
            password_end: ABSENT,
            host_start: ABSENT,
            host_end: ABSENT,
            port: ABSENT,
            path_start: 0,
            query_start: ABSENT,
            fragment_start: ABSENT,
            len: 0,
            special: false,
            opaque_path: false,
        }
    }
}

impl Parts {
    /// End of the path: the `?`, the `#`, or the end of the URL.
    pub fn path_end(&self) -> u32 {
        if self.query_start != ABSENT {
            self.query_start
        } else if self.fragment_start != ABSENT {
            self.fragment_start
        } else {
            self.len
        }
    }

    /// End of the query (the `#` or the end); meaningful only when a query exists.
    pub fn query_end(&self) -> u32 {
        if self.fragment_start != ABSENT {
            self.fragment_start
        } else {
            self.len
        }
    }

    /// The scheme, without `:`; `None` in path-only output.
    pub fn scheme<'a>(&self, url: &'a [u8]) -> Option<&'a [u8]> {
        (self.scheme_end != ABSENT).then(|| &url[..self.scheme_end as usize])
    }

    /// The username (possibly empty); `None` when the host is null.
    pub fn username<'a>(&self, url: &'a [u8]) -> Option<&'a [u8]> {
        (self.username_start != ABSENT)
            .then(|| &url[self.username_start as usize..self.username_end as usize])
    }

    /// The password (possibly empty); `None` when the host is null.
    pub fn password<'a>(&self, url: &'a [u8]) -> Option<&'a [u8]> {
        (self.password_start != ABSENT)
            .then(|| &url[self.password_start as usize..self.password_end as usize])
    }

    /// The serialized host (IPv6 in brackets); `None` when the host is null.
    pub fn host<'a>(&self, url: &'a [u8]) -> Option<&'a [u8]> {
        (self.host_start != ABSENT).then(|| &url[self.host_start as usize..self.host_end as usize])
    }

    /// The port, `None` when null.
    pub fn port(&self) -> Option<u16> {
        (self.port != ABSENT).then_some(self.port as u16)
    }

    /// The path (opaque or not), possibly empty.
    pub fn path<'a>(&self, url: &'a [u8]) -> &'a [u8] {
        &url[self.path_start as usize..self.path_end() as usize]
    }

    /// The query without `?`; `None` when null.
    pub fn query<'a>(&self, url: &'a [u8]) -> Option<&'a [u8]> {
        (self.query_start != ABSENT)
            .then(|| &url[self.query_start as usize + 1..self.query_end() as usize])
    }

    /// The fragment without `#`; `None` when null.
    pub fn fragment<'a>(&self, url: &'a [u8]) -> Option<&'a [u8]> {
        (self.fragment_start != ABSENT).then(|| &url[self.fragment_start as usize + 1..])
    }

    /// Checks the ordering invariants against the URL bytes.
    pub fn is_consistent(&self, url: &[u8]) -> bool {
        let len = self.len;
        if len as usize != url.len() {
            return false;
        }
        let mut last = 0u32;
        let mut ok = true;
        for off in [
            self.scheme_end,
            self.username_start,
            self.username_end,
            self.password_start,
            self.password_end,
            self.host_start,
            self.host_end,
            self.path_start,
            self.query_start,
            self.fragment_start,
        ] {
            if off == ABSENT {
                continue;
            }
            ok &= off >= last && off <= len;
            last = off;
        }
        if self.scheme_end != ABSENT {
            ok &= url.get(self.scheme_end as usize) == Some(&b':');
        }
        if self.query_start != ABSENT {
            ok &= url.get(self.query_start as usize) == Some(&b'?');
        }
        if self.fragment_start != ABSENT {
            ok &= url.get(self.fragment_start as usize) == Some(&b'#');
        }
        ok
    }
}
