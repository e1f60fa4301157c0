//! Records that name their host (a virtual host, W3C's `cs-host`, a JSON
//! log's `Host`): their URL is the host's canonical prefix and the target's
//! canonical form, so the prefix is made once per host and the target is
//! canonicalized where it lies in the line, as a log without hosts has it.
//!
//! Without this, each such record's URL is built (`scheme://host:port` and
//! the target, four appends) and canonicalized whole: host parsing and the
//! general parser's setup, for a host that is the same on most lines.
//!
//! What makes the two halves independent: in a special scheme (`http`,
//! `https`) the URL Standard parses the path, query and fragment of
//! `scheme://host/target` the same whatever the host (the host state ends
//! at the first `/`, and the path states never read it back), and the
//! path-only mode of [`Canonicalizer::canonicalize_target`] is those states
//! with the `http` scheme's rules. So for an origin-form target `t`,
//! `canonical("scheme://host:port" + t)` is `canonical("scheme://host:port/")`
//! without its `/`, then `canonical_target(t)`. With dedup rules this does
//! not hold (`www`, host sections and aliases read the host with the path),
//! and the fast path is not taken ([`Canonicalizer::takes_in_line`]).

use crate::log::{request_url_of, Extracted, RequestUrl, Scheme};
use crate::Canonicalizer;

/// Slots of the table of prefixes (a power of two), open addressing: a log
/// names a few hosts or a few hundred, interleaved.
const SLOTS: usize = 1024;

/// The most hosts kept: at this many the table is emptied (its buffers
/// kept) and fills again, so probes stay short.
const MOST_HOSTS: usize = SLOTS / 2;

/// The canonical prefixes of the hosts the records of a worker named, in
/// a table indexed by a hash of the host. Its buffers are reused, so a host
/// made again allocates nothing.
#[derive(Clone, Debug, Default)]
pub(super) struct HostPrefixes {
    /// `--scheme`: the scheme of a record that does not log its own.
    scheme: Option<Scheme>,
    slots: Vec<Entry>,
    /// How many slots hold a host.
    used: usize,
    /// Scratch: the record whose URL makes a prefix: the host, scheme and
    /// port of the one looked up, with an origin-form target, whatever
    /// else that one says (a reader that finds the host before reading the
    /// line leaves the rest of the record as the last line left it).
    key: Extracted,
    /// Scratch: the URL `scheme://host:port/` built to make a prefix.
    built: Vec<u8>,
    /// Scratch: its canonical form.
    canonical: Vec<u8>,
}

/// One host's prefix, under the record fields that made it.
#[derive(Clone, Debug, Default)]
struct Entry {
    /// Whether the slot holds a host (an empty host is never looked up).
    used: bool,
    host: Vec<u8>,
    scheme: Option<Scheme>,
    port: Option<u16>,
    /// Whether the host's URL splits into a prefix and a target (not: a
    /// host the general path rejects, say): if not, its records take the
    /// general path.
    splits: bool,
    /// `scheme://host[:port]` canonical, when `splits`.
    prefix: Vec<u8>,
    /// The length of the built URL before the target: the general path
    /// rejects a URL longer than the canonicalizer's maximum input, and
    /// the fast path must reject the same ones.
    built_len: usize,
}

impl Entry {
    #[inline(always)]
    fn holds(&self, host: &[u8], scheme: Option<Scheme>, port: Option<u16>) -> bool {
        self.used && self.scheme == scheme && self.port == port && same_bytes(&self.host, host)
    }
}

impl HostPrefixes {
    /// An empty table, for a run with `--scheme` `scheme`.
    pub(super) fn new(scheme: Option<Scheme>) -> HostPrefixes {
        HostPrefixes {
            scheme,
            ..HostPrefixes::default()
        }
    }

    /// The canonical `scheme://host[:port]` of `record`'s URL and the
    /// length of what the general path would build before the target, or
    /// `None` when its records must take the general path.
    #[inline]
    pub(super) fn prefix(
        &mut self,
        record: &Extracted,
        canon: &mut Canonicalizer,
    ) -> Option<(&[u8], usize)> {
        let (host, scheme, port) = (&record.host[..], record.scheme, record.port);
        self.lookup(host, scheme, port, canon, |key| {
            key.host.extend_from_slice(host);
            key.scheme = scheme;
            key.port = port;
        })
    }

    /// [`prefix`](Self::prefix) of the record whose host, scheme and port
    /// `read_field` reads from `field` (a `vhost` line's `%v:%p`) into a
    /// cleared record, keyed by `field`'s bytes: a line whose host is found
    /// this way is not read into a record. Use a table for one kind of
    /// field only (and not for [`prefix`](Self::prefix)).
    #[inline(always)]
    pub(super) fn prefix_of_field(
        &mut self,
        field: &[u8],
        canon: &mut Canonicalizer,
        read_field: impl FnOnce(&[u8], &mut Extracted),
    ) -> Option<(&[u8], usize)> {
        self.lookup(field, None, None, canon, |key| read_field(field, key))
    }

    /// The entry of the key (`host`, `scheme`, `port`), made if it is not
    /// there by `fill`, which puts the fields of the record that has that
    /// key into a cleared one.
    #[inline(always)]
    fn lookup(
        &mut self,
        host: &[u8],
        scheme: Option<Scheme>,
        port: Option<u16>,
        canon: &mut Canonicalizer,
        fill: impl FnOnce(&mut Extracted),
    ) -> Option<(&[u8], usize)> {
        let mut at = (host_hash(host) as usize) & (SLOTS - 1);
        loop {
            match self.slots.get(at) {
                Some(e) if e.holds(host, scheme, port) => break,
                Some(e) if e.used => at = (at + 1) & (SLOTS - 1),
                _ => {
                    at = self.make(host, scheme, port, canon, fill);
                    break;
                }
            }
        }
        let e = &self.slots[at];
        e.splits.then_some((&e.prefix[..], e.built_len))
    }

    /// Makes the entry of the key (`host`, `scheme`, `port`) with `fill`
    /// (see [`lookup`](Self::lookup)), which is not in the table; returns
    /// its slot.
    #[cold]
    #[inline(never)]
    fn make(
        &mut self,
        host: &[u8],
        scheme: Option<Scheme>,
        port: Option<u16>,
        canon: &mut Canonicalizer,
        fill: impl FnOnce(&mut Extracted),
    ) -> usize {
        if self.slots.is_empty() {
            self.slots.resize_with(SLOTS, Entry::default);
        }
        if self.used == MOST_HOSTS {
            self.slots.iter_mut().for_each(|e| e.used = false);
            self.used = 0;
        }
        let mut at = (host_hash(host) as usize) & (SLOTS - 1);
        while self.slots[at].used {
            at = (at + 1) & (SLOTS - 1);
        }
        self.used += 1;
        let key = &mut self.key;
        key.clear();
        fill(key);
        key.has_target = true;
        let built = request_url_of(key, b"/", None, self.scheme, &mut self.built);
        let (splits, built_len) = match built {
            RequestUrl::Built { prefix } => (self.canonical_prefix(canon), prefix),
            _ => (false, 0),
        };
        let e = &mut self.slots[at];
        e.used = true;
        e.host.clear();
        e.host.extend_from_slice(host);
        e.scheme = scheme;
        e.port = port;
        e.splits = splits;
        e.built_len = built_len;
        e.prefix.clear();
        if splits {
            e.prefix.extend_from_slice(&self.canonical);
        }
        at
    }

    /// Leaves in `self.canonical` the canonical form of `self.built`
    /// (`scheme://host[:port]/`) without its path, and says so, if it is a
    /// special URL whose path is the `/` alone.
    fn canonical_prefix(&mut self, canon: &mut Canonicalizer) -> bool {
        self.canonical.clear();
        let Ok(c) = canon.canonicalize_into(&self.built, &mut self.canonical) else {
            return false;
        };
        let p = c.parts;
        let root = p.special
            && !p.opaque_path
            && self.canonical.len() == p.path_start as usize + 1
            && self.canonical.last() == Some(&b'/');
        self.canonical.truncate(p.path_start as usize);
        root
    }
}

/// Whether `a` and `b` are the same bytes: a host is a few bytes, compared
/// eight at a time inline instead of by a `memcmp` call.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut a8, mut b8) = (a.chunks_exact(8), b.chunks_exact(8));
    if !a8.by_ref().zip(b8.by_ref()).all(|(x, y)| x == y) {
        return false;
    }
    a8.remainder() == b8.remainder()
}

/// A hash of a host's bytes for the table's index: its first and last
/// eight bytes (or all of a shorter one) and its length, mixed.
#[inline(always)]
fn host_hash(host: &[u8]) -> u64 {
    let n = host.len();
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    };
    let (first, last) = if n >= 8 {
        (word(&host[..8]), word(&host[n - 8..]))
    } else {
        (word(host), 0)
    };
    let h = (first ^ last.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h >> 40
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Profile;

    /// For every host, port, scheme and target below, in both profiles
    /// without rules: where the fast path takes a record (a prefix and the
    /// target taken where it lies), it writes what the general path writes
    /// for the URL built from the record, and says the same built length.
    #[test]
    fn prefix_and_target_make_the_built_urls_canonical_form() {
        let hosts: &[&[u8]] = &[
            b"example.com",
            b"EXAMPLE.com",
            b"Ex.",
            b"a_b.example",
            b"127.0.0.1",
            b"0x7f.1",
            b"1.2.3",
            b"[::1]",
            b"[0:0::1]",
            b"[::1",
            b"xn--nxasmq6b.example",
            b"xn--a.example",
            b"m\xc3\xbcnchen.de",
            b"ex%41mple.com",
            b"host:8080",
            b"a..b",
            b"-",
            b"h\xff",
        ];
        let targets: &[&[u8]] = &[
            b"/",
            b"/a/b",
            b"/a/../b",
            b"/a/./b/",
            b"/..",
            b"/a/%2e%2E/b",
            b"/%7e",
            b"/%7E",
            b"/a?b=c",
            b"/a?b=%7e&c",
            b"/a#f",
            b"/?",
            b"/#",
            b"//x",
            b"/a\\b",
            b"/\xc3\xa9",
            b"/\xff",
            b"/%zz",
            b"/a?%",
            b"/a;b",
            b"/a|b",
            b"/a\"b",
        ];
        let ports = [None, Some(80), Some(443), Some(8080)];
        let schemes = [None, Some(Scheme::Http), Some(Scheme::Https)];
        let (mut taken, mut compared) = (0, 0);
        for profile in [Profile::Whatwg, Profile::Rfc3986] {
            let mut canon = Canonicalizer::new(profile);
            for given in schemes {
                let mut prefixes = HostPrefixes::new(given);
                for &host in hosts {
                    for port in ports {
                        for record_scheme in schemes {
                            let mut record = Extracted::default();
                            record.host.extend_from_slice(host);
                            record.port = port;
                            record.scheme = record_scheme;
                            record.has_target = true;
                            for &target in targets {
                                let mut built = Vec::new();
                                let general = match request_url_of(
                                    &record, target, None, given, &mut built,
                                ) {
                                    RequestUrl::Built { prefix } => {
                                        let mut out = Vec::new();
                                        let ok = canon.canonicalize_into(&built, &mut out).is_ok();
                                        Some((ok.then_some(out), prefix))
                                    }
                                    _ => None,
                                };
                                let Some((p, built_len)) = prefixes.prefix(&record, &mut canon)
                                else {
                                    continue;
                                };
                                let mut fast = p.to_vec();
                                let mut line = target.to_vec();
                                line.extend_from_slice(b" HTTP/1.1\"");
                                if canon.dotted_target_in_line(&line, &mut fast)
                                    != Some(target.len())
                                {
                                    continue;
                                }
                                taken += 1;
                                let (general, general_len) =
                                    general.expect("the general path builds it");
                                assert_eq!(built_len, general_len, "{host:?} {port:?} {target:?}");
                                let general = general.expect("the general path takes it");
                                assert_eq!(
                                    fast,
                                    general,
                                    "{profile:?} {:?} {port:?} {:?} {:?}",
                                    bstr::BStr::new(host),
                                    bstr::BStr::new(target),
                                    given
                                );
                                compared += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(taken, compared);
        assert!(
            compared > 5_000,
            "the fast path took only {compared} records"
        );
    }

    /// A table keyed by fields: the prefix of the record that the field
    /// reader makes, whatever else was in the record before, and no prefix
    /// where that record has no host.
    #[test]
    fn prefixes_of_fields_are_those_of_the_records_read_from_them() {
        let mut canon = Canonicalizer::new(Profile::Rfc3986);
        let mut prefixes = HostPrefixes::new(None);
        let read = |field: &[u8], out: &mut Extracted| match field.iter().position(|&b| b == b'~') {
            Some(i) => {
                out.host.extend_from_slice(&field[..i]);
                out.port = std::str::from_utf8(&field[i + 1..])
                    .ok()
                    .and_then(|p| p.parse().ok());
            }
            None => out.host.extend_from_slice(field),
        };
        for _ in 0..2 {
            let got = prefixes.prefix_of_field(b"A.example~8080", &mut canon, read);
            assert_eq!(got.map(|g| g.0), Some(&b"http://a.example:8080"[..]));
            let got = prefixes.prefix_of_field(b"A.example~443", &mut canon, read);
            assert_eq!(got.map(|g| g.0), Some(&b"https://a.example"[..]));
            let got = prefixes.prefix_of_field(b"A.example", &mut canon, read);
            assert_eq!(
                got,
                Some((&b"http://a.example"[..], "http://A.example".len()))
            );
            assert_eq!(prefixes.prefix_of_field(b"", &mut canon, read), None);
            assert_eq!(prefixes.prefix_of_field(b"a b", &mut canon, read), None);
        }
        assert_eq!(prefixes.used, 5);
    }

    #[test]
    fn a_host_made_again_is_found_and_the_table_empties_when_full() {
        let mut canon = Canonicalizer::new(Profile::Whatwg);
        let mut prefixes = HostPrefixes::default();
        // What else the record says does not matter.
        let mut record = Extracted::default();
        record.connect = true;
        for round in 0..3 {
            for i in 0..(MOST_HOSTS + 7) {
                record.host.clear();
                record
                    .host
                    .extend_from_slice(format!("H{i}.example").as_bytes());
                let (p, _) = prefixes.prefix(&record, &mut canon).expect("a plain host");
                assert_eq!(
                    p,
                    format!("http://h{i}.example").as_bytes(),
                    "round {round}"
                );
                assert!(prefixes.used <= MOST_HOSTS);
            }
        }
        // A host with a port, then the same host without: two entries.
        record.host.clear();
        record.host.extend_from_slice(b"a.example");
        record.port = Some(8080);
        assert_eq!(
            prefixes.prefix(&record, &mut canon).unwrap().0,
            b"http://a.example:8080"
        );
        record.port = None;
        assert_eq!(
            prefixes.prefix(&record, &mut canon).unwrap().0,
            b"http://a.example"
        );
        record.scheme = Some(Scheme::Https);
        assert_eq!(
            prefixes.prefix(&record, &mut canon).unwrap().0,
            b"https://a.example"
        );
    }
}
