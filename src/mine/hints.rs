//! Redirect hints: a `301`/`302`/`307`/`308` answered for one URL, and the
//! same client's next request, within [`FOLLOW_SECONDS`], for another URL
//! of the same host. A browser follows a redirect at once, so the second
//! URL is most likely where the first one points (an access log does not
//! keep the `Location`); over many pairs the hints say how a site moved its
//! pages (`/old/...` → `/new/...`, `/a/index.html` → `/a/`), and the miner
//! makes rules of them (`candidates.rs`, [`super::candidates::from_hints`]).
//!
//! Where hints are seen: each worker of `summarize` follows its clients
//! ([`Follow`]) through the records of one piece of the input at a time (a
//! piece is the same cut of a file whatever the number of threads), so the
//! hints do not depend on `-j`. A pair whose two records lie in two pieces,
//! or in two files summarized apart, is not seen: at most the pairs at
//! piece edges (a piece is several MiB) and at file edges are lost.
//!
//! How hints merge: a summary keeps them as a **bottom-k sample** like its
//! sizes and clients (`summary.rs`): the [`HINTS_KEPT`] distinct (host,
//! from, to) with the smallest hashes, each with its exact count. Summing
//! the counts of the parts' samples and keeping the smallest hashes again
//! is exact, in any order of merging, so `summarize --merge` of the parts
//! gives the hints of the whole (less the pairs that span two parts).
//!
//! The TSV form: when a summary has hints, they come first, after their
//! own header line [`HEADER`], sorted; then the summary's header and rows
//! as before. A summary without hints (every summary from before hints
//! existed) starts with the summary header, byte for byte as it did.
//!
//! ```text
//! host  from  to  redirects
//! ```

use std::collections::BTreeMap;

use xxhash_rust::xxh64::xxh64;

use super::summary::RowError;

/// The header line of a summary's hint section, with its line end.
pub(crate) const HEADER: &str = "host\tfrom\tto\tredirects\n";

/// Seconds between a redirect and the same client's next request for it to
/// be a hint: a browser follows at once; a person clicking takes longer.
pub(crate) const FOLLOW_SECONDS: i64 = 5;

/// Distinct (host, from, to) hints a summary keeps (bottom-k by hash): a
/// few MiB at most, beside `--memory` (which bounds the rows). Rules are
/// general; a sample of this many pairs shows each one many times.
pub(crate) const HINTS_KEPT: usize = 1 << 14;

/// Clients followed at once per worker: a direct-mapped table by the
/// client's hash, a client whose slot another one takes is forgotten.
const CLIENTS_FOLLOWED: usize = 4096;

const HINT_SEED: u64 = 0x0d12_ec75;
pub(crate) const FOLLOW_SEED: u64 = 0xf0_11_0e;

/// The statuses that send a browser to another URL of the same page.
/// (`303 See Other` answers a form with another page: no hint.)
pub(crate) fn is_redirect(status: Option<u16>) -> bool {
    matches!(status, Some(301 | 302 | 307 | 308))
}

/// The bottom-k sample of a summary's hints, with exact counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Hints {
    /// By (hash, `host\tfrom\tto`): the order of the sample.
    kept: BTreeMap<(u64, Box<[u8]>), u64>,
}

/// One hint as read back: host, from-URL, to-URL, count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hint<'a> {
    pub host: &'a [u8],
    pub from: &'a [u8],
    pub to: &'a [u8],
    pub count: u64,
}

impl Hints {
    pub(crate) fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Counts `count` more pairs from `from` to `to` (URLs of `host`).
    pub(crate) fn add(&mut self, host: &[u8], from: &[u8], to: &[u8], count: u64) {
        let mut key = Vec::with_capacity(host.len() + from.len() + to.len() + 2);
        for (i, part) in [host, from, to].into_iter().enumerate() {
            if i > 0 {
                key.push(b'\t');
            }
            key.extend_from_slice(part);
        }
        self.add_key(key.into_boxed_slice(), count);
    }

    fn add_key(&mut self, key: Box<[u8]>, count: u64) {
        let rank = (xxh64(&key, HINT_SEED), key);
        if self.kept.len() == HINTS_KEPT {
            match self.kept.last_key_value() {
                Some((last, _)) if rank > *last => return, // not in the sample
                _ => {}
            }
        }
        *self.kept.entry(rank).or_default() += count;
        if self.kept.len() > HINTS_KEPT {
            self.kept.pop_last();
        }
    }

    /// Adds `other`'s hints (of another part of the input).
    pub(crate) fn merge(&mut self, other: &Hints) {
        for ((_, key), &count) in &other.kept {
            self.add_key(key.clone(), count);
        }
    }

    /// The hints in (host, from, to) order.
    pub(crate) fn sorted(&self) -> Vec<Hint<'_>> {
        let mut list: Vec<Hint<'_>> = self
            .kept
            .iter()
            .map(|((_, key), &count)| {
                let mut cells = key.splitn(3, |&b| b == b'\t');
                let mut next = || cells.next().unwrap_or_default();
                Hint {
                    host: next(),
                    from: next(),
                    to: next(),
                    count,
                }
            })
            .collect();
        list.sort_unstable_by(|a, b| (a.host, a.from, a.to).cmp(&(b.host, b.from, b.to)));
        list
    }

    /// The hint section (its header, then one line per hint), or nothing
    /// when there are no hints.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        if self.is_empty() {
            return;
        }
        out.extend_from_slice(HEADER.as_bytes());
        let mut num = itoa::Buffer::new();
        for h in self.sorted() {
            for cell in [h.host, h.from, h.to] {
                out.extend_from_slice(cell);
                out.push(b'\t');
            }
            out.extend_from_slice(num.format(h.count).as_bytes());
            out.push(b'\n');
        }
    }

    /// Reads one line of a hint section (without its line end) into the sample.
    pub(crate) fn parse_line(&mut self, line: &[u8]) -> Result<(), RowError> {
        let cells: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
        let names = ["host", "from", "to", "redirects"];
        if cells.len() < 4 {
            return Err(RowError::Missing(names[cells.len()]));
        }
        if cells.len() > 4 {
            return Err(RowError::Extra);
        }
        let count = crate::ascii::parse_u64(cells[3])
            .filter(|&n| n > 0)
            .ok_or(RowError::Bad("redirects"))?;
        if cells[1].is_empty() || cells[1] == cells[2] {
            return Err(RowError::Bad("from"));
        }
        if cells[2].is_empty() {
            return Err(RowError::Bad("to"));
        }
        self.add(cells[0], cells[1], cells[2], count);
        Ok(())
    }
}

/// One followed client: its hash, and its last redirect (time, URL).
#[derive(Default)]
struct Slot {
    client: u64,
    time: i64,
    url: Vec<u8>,
    pending: bool,
}

/// The clients of one worker, each with the redirect it was last answered
/// (if its next request has not come yet): [`CLIENTS_FOLLOWED`] slots.
pub(crate) struct Follow {
    slots: Vec<Slot>,
}

impl Default for Follow {
    fn default() -> Follow {
        Follow {
            slots: (0..CLIENTS_FOLLOWED).map(|_| Slot::default()).collect(),
        }
    }
}

/// The hash [`Follow`] knows a client by.
pub(crate) fn follow_hash(client: &[u8]) -> u64 {
    xxh64(client, FOLLOW_SEED)
}

impl Follow {
    /// One record, in input order: `url` (of `host`) requested at `time`
    /// by the client whose [`follow_hash`] is `hash`, answered `status`.
    /// Counts a hint in `hints` when it is the client's next request after
    /// a redirect, soon enough, for another URL of the redirect's host.
    pub(crate) fn record(
        &mut self,
        host: &[u8],
        url: &[u8],
        status: Option<u16>,
        time: i64,
        hash: u64,
        hints: &mut Hints,
    ) {
        let slot = &mut self.slots[(hash % CLIENTS_FOLLOWED as u64) as usize];
        if slot.pending && slot.client == hash {
            slot.pending = false;
            let gap = time - slot.time;
            if (0..=FOLLOW_SECONDS).contains(&gap)
                && slot.url != url
                && super::sink::url_host(&slot.url) == host
            {
                hints.add(host, &slot.url, url, 1);
            }
        }
        if is_redirect(status) {
            slot.client = hash;
            slot.time = time;
            slot.url.clear();
            slot.url.extend_from_slice(url);
            slot.pending = true;
        }
    }

    /// The end of a piece of the input: the next record is not the next one
    /// of the log (another worker may have it), so no redirect is pending.
    pub(crate) fn forget(&mut self) {
        for s in &mut self.slots {
            s.pending = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Follows `(url, status, time, client)` records, returns the hints
    /// as `host from to count` lines.
    fn follow(records: &[(&str, u16, i64, &str)]) -> Vec<String> {
        let mut f = Follow::default();
        let mut hints = Hints::default();
        for &(url, status, time, client) in records {
            let host = super::super::sink::url_host(url.as_bytes());
            f.record(
                host,
                url.as_bytes(),
                Some(status),
                time,
                follow_hash(client.as_bytes()),
                &mut hints,
            );
        }
        hints
            .sorted()
            .iter()
            .map(|h| {
                format!(
                    "{} {} {} {}",
                    String::from_utf8_lossy(h.host),
                    String::from_utf8_lossy(h.from),
                    String::from_utf8_lossy(h.to),
                    h.count
                )
            })
            .collect()
    }

    const OLD: &str = "https://a.example/old/x";
    const NEW: &str = "https://a.example/new/x";

    #[test]
    fn a_redirect_followed_at_once_by_its_client_is_a_hint() {
        for status in [301, 302, 307, 308] {
            let got = follow(&[(OLD, status, 100, "c1"), (NEW, 200, 101, "c1")]);
            assert_eq!(
                got,
                ["a.example https://a.example/old/x https://a.example/new/x 1"]
            );
        }
        // Another client's request in between changes nothing; two pairs count twice.
        let got = follow(&[
            (OLD, 301, 100, "c1"),
            ("https://a.example/other", 200, 100, "c2"),
            (NEW, 200, 105, "c1"),
            (OLD, 301, 200, "c3"),
            (NEW, 200, 200, "c3"),
        ]);
        assert_eq!(
            got,
            ["a.example https://a.example/old/x https://a.example/new/x 2"]
        );
    }

    #[test]
    fn what_is_not_a_hint() {
        let cases: &[&[(&str, u16, i64, &str)]] = &[
            // Followed after 10 s: a person, not a browser following.
            &[(OLD, 301, 100, "c1"), (NEW, 200, 110, "c1")],
            // By another client.
            &[(OLD, 301, 100, "c1"), (NEW, 200, 101, "c2")],
            // To another host.
            &[
                (OLD, 301, 100, "c1"),
                ("https://b.example/new/x", 200, 101, "c1"),
            ],
            // Not a redirect (303 answers a form with another page), or none.
            &[(OLD, 303, 100, "c1"), (NEW, 200, 101, "c1")],
            &[(OLD, 200, 100, "c1"), (NEW, 200, 101, "c1")],
            // The same URL again.
            &[(OLD, 301, 100, "c1"), (OLD, 200, 101, "c1")],
            // A time going backwards is not "within seconds after".
            &[(OLD, 301, 100, "c1"), (NEW, 200, 99, "c1")],
        ];
        for case in cases {
            assert!(follow(case).is_empty(), "{case:?}");
        }
        // Only the client's next request counts (the miner's evidence tells
        // a page from a stylesheet).
        let got = follow(&[
            (OLD, 301, 100, "c1"),
            ("https://a.example/style.css", 200, 100, "c1"),
            (NEW, 200, 101, "c1"),
        ]);
        assert_eq!(
            got,
            ["a.example https://a.example/old/x https://a.example/style.css 1"]
        );
        // A redirect to a redirect: two hints, each of one step.
        let got = follow(&[
            ("https://a.example/a", 301, 1, "c"),
            ("https://a.example/b", 301, 1, "c"),
            ("https://a.example/c", 200, 1, "c"),
        ]);
        assert_eq!(got.len(), 2, "{got:?}");
    }

    #[test]
    fn a_piece_edge_forgets_the_pending_redirects() {
        let mut f = Follow::default();
        let mut hints = Hints::default();
        let host = b"a.example".as_slice();
        f.record(
            host,
            OLD.as_bytes(),
            Some(301),
            1,
            follow_hash(b"c"),
            &mut hints,
        );
        f.forget();
        f.record(
            host,
            NEW.as_bytes(),
            Some(200),
            2,
            follow_hash(b"c"),
            &mut hints,
        );
        assert!(hints.is_empty());
    }

    #[test]
    fn merging_samples_of_parts_gives_the_sample_of_the_whole() {
        // More distinct hints than are kept, with repeats, cut into parts.
        let n = HINTS_KEPT * 3;
        let hint = |i: usize| (format!("/f/{}", i % n), format!("/t/{}", (i * 7) % 13));
        let mut whole = Hints::default();
        let mut parts = vec![Hints::default(); 4];
        for i in 0..n * 2 {
            let (from, to) = hint(i * 31 % (n + 17));
            whole.add(b"", from.as_bytes(), to.as_bytes(), 1);
            parts[i % 3 + usize::from(i > n)].add(b"", from.as_bytes(), to.as_bytes(), 1);
        }
        assert_eq!(whole.kept.len(), HINTS_KEPT);
        assert!(whole.kept.values().any(|&c| c > 1));
        for order in [[0, 1, 2, 3], [3, 1, 0, 2]] {
            let mut merged = Hints::default();
            for i in order {
                merged.merge(&parts[i]);
            }
            assert!(merged == whole, "{order:?}");
        }
        // Written and read back, the same sample.
        let mut text = Vec::new();
        whole.write(&mut text);
        let mut back = Hints::default();
        let mut lines = text.split(|&b| b == b'\n');
        assert_eq!(lines.next(), Some(HEADER.trim_end().as_bytes()));
        for line in lines.filter(|l| !l.is_empty()) {
            back.parse_line(line).unwrap();
        }
        assert!(back == whole);
    }

    #[test]
    fn bad_hint_lines_name_the_column() {
        let mut h = Hints::default();
        for (line, err) in [
            ("h\t/a\t/b", RowError::Missing("redirects")),
            ("h\t/a", RowError::Missing("to")),
            ("h\t/a\t/b\t1\tx", RowError::Extra),
            ("h\t/a\t/b\t0", RowError::Bad("redirects")),
            ("h\t/a\t/b\tx", RowError::Bad("redirects")),
            ("h\t/a\t/a\t1", RowError::Bad("from")),
            ("h\t/a\t\t1", RowError::Bad("to")),
        ] {
            assert_eq!(h.parse_line(line.as_bytes()), Err(err), "{line}");
        }
        assert!(h.is_empty());
    }
}
