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
/// a table indexed by a hash of the host: the host named last is looked at
/// first. Its buffers are reused, so a host made again allocates nothing.
#[derive(Debug, Default)]
pub(super) struct HostPrefixes {
    /// `--scheme`: the scheme of a record that does not log its own.
    scheme: Option<Scheme>,
    slots: Vec<Entry>,
    /// How many slots hold a host.
    used: usize,
    /// The slot looked up last.
    last: usize,
    /// Scratch: the URL `scheme://host:port/` built to make a prefix.
    built: Vec<u8>,
    /// Scratch: its canonical form.
    canonical: Vec<u8>,
}

/// One host's prefix, under the record fields that made it.
#[derive(Debug, Default)]
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
    fn holds(&self, record: &Extracted) -> bool {
        self.used
            && self.host == record.host
            && self.scheme == record.scheme
            && self.port == record.port
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
        let at = match self.slots.get(self.last) {
            Some(e) if e.holds(record) => self.last,
            _ => self.find(record, canon),
        };
        self.last = at;
        let e = &self.slots[at];
        e.splits.then_some((&e.prefix[..], e.built_len))
    }

    /// The slot of `record`'s host, made if it is not there.
    #[inline(never)]
    fn find(&mut self, record: &Extracted, canon: &mut Canonicalizer) -> usize {
        if self.slots.is_empty() {
            self.slots.resize_with(SLOTS, Entry::default);
        }
        let mut at = (host_hash(&record.host) as usize) & (SLOTS - 1);
        loop {
            let e = &self.slots[at];
            if !e.used {
                break;
            }
            if e.holds(record) {
                return at;
            }
            at = (at + 1) & (SLOTS - 1);
        }
        if self.used == MOST_HOSTS {
            self.slots.iter_mut().for_each(|e| e.used = false);
            self.used = 0;
            return self.find(record, canon);
        }
        self.used += 1;
        self.make(at, record, canon);
        at
    }

    /// Makes slot `at` the entry of `record`'s host.
    #[cold]
    fn make(&mut self, at: usize, record: &Extracted, canon: &mut Canonicalizer) {
        let built = request_url_of(record, b"/", None, self.scheme, &mut self.built);
        let (splits, built_len) = match built {
            RequestUrl::Built { prefix } => (self.canonical_prefix(canon), prefix),
            _ => (false, 0),
        };
        let e = &mut self.slots[at];
        e.used = true;
        e.host.clear();
        e.host.extend_from_slice(&record.host);
        e.scheme = record.scheme;
        e.port = record.port;
        e.splits = splits;
        e.built_len = built_len;
        e.prefix.clear();
        if splits {
            e.prefix.extend_from_slice(&self.canonical);
        }
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

    #[test]
    fn a_host_made_again_is_found_and_the_table_empties_when_full() {
        let mut canon = Canonicalizer::new(Profile::Whatwg);
        let mut prefixes = HostPrefixes::default();
        let mut record = Extracted::default();
        record.has_target = true;
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
