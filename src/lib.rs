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
//! - [`Profile::Safe`]: `Rfc3986` plus the dedup rules of the safe tier (the
//!   fragment, tracking and session parameters, userinfo, an empty query, ...),
//!   which merge URLs that name the same page on practically every site.
//! - [`Profile::Aggressive`]: `Safe` plus the aggressive tier (`www.`, index
//!   files, a sorted query, duplicate and trailing slashes, ...), for
//!   search-index and crawl dedup keys.
//!
//! Each dedup rule is a [`canon::rules::Rule`], named and switchable; the
//! whole list, with tiers and effects, is [`canon::rules::Rule::ALL`] and
//! `canonurl --list-rules`.
//!
//! | profile | what it gives |
//! |---|---|
//! | `whatwg` | the WHATWG URL Standard's href, rejected where its parser fails |
//! | `rfc3986` (the command's default) | `whatwg` plus meaning-preserving normalization; always a valid RFC 3986 URI |
//! | `safe` | `rfc3986` plus the rules safe on practically every site |
//! | `aggressive` | `safe` plus the rules right for most sites, wrong for some |
//!
//! The four on one URL ([`Profile::ALL`], from the most faithful):
//!
//! ```
//! use canonurl::{Canonicalizer, Profile};
//!
//! let url = b"HTTP://www.Example.COM:80/a/./b/index.html?utm_source=x&%7ex=1#top";
//! let mut written = Vec::new();
//! for profile in Profile::ALL {
//!     let mut out = Vec::new();
//!     Canonicalizer::new(profile).canonicalize_into(url, &mut out).unwrap();
//!     written.push((profile.name(), String::from_utf8(out).unwrap()));
//! }
//! assert_eq!(written, [
//!     ("whatwg", "http://www.example.com/a/b/index.html?utm_source=x&%7ex=1#top".to_string()),
//!     ("rfc3986", "http://www.example.com/a/b/index.html?utm_source=x&~x=1#top".to_string()),
//!     ("safe", "http://www.example.com/a/b/index.html?~x=1".to_string()),
//!     ("aggressive", "http://example.com/a/b/?~x=1".to_string()),
//! ]);
//! ```
//!
//! The repository's README.md shows the command; its `docs/` directory
//! has a page per subject (the rules and rules files, the log formats, the
//! output, memory, mining rules from logs, conformance, performance).
//!
//! ## Examples
//!
//! The `whatwg` profile gives the URL Standard's href:
//!
//! ```
//! use canonurl::{Canonicalizer, Profile};
//!
//! let mut c = Canonicalizer::new(Profile::Whatwg);
//! let mut out = Vec::new();
//! let r = c.canonicalize_into(b"HTTP://Example.COM:80/a/./b/../%7euser?q=%2f", &mut out).unwrap();
//! assert_eq!(out, b"http://example.com/a/%7euser?q=%2f");
//! assert_eq!(r.parts.host(&out), Some(&b"example.com"[..]));
//! assert!(!r.unchanged);
//! ```
//!
//! The `rfc3986` profile adds escape normalization that keeps the meaning,
//! and its output is a URI by the grammar of RFC 3986 (the characters it
//! excludes are percent-encoded):
//!
//! ```
//! use canonurl::{Canonicalizer, Profile};
//!
//! let mut c = Canonicalizer::new(Profile::Rfc3986);
//! let mut out = Vec::new();
//! c.canonicalize_into(b"HTTP://Example.COM:80/a/./b/../%7euser?q=%2f", &mut out).unwrap();
//! assert_eq!(out, b"http://example.com/a/~user?q=%2F");
//! out.clear();
//! c.canonicalize_into(b"http://example.com/?x[y]=1", &mut out).unwrap();
//! assert_eq!(out, b"http://example.com/?x%5By%5D=1");
//! ```
//!
//! A base URL is parsed once and resolves many relative references; without
//! one, [`Canonicalizer::canonicalize_target`] writes an origin-form request
//! target path-only, as logs often carry no host. Rejections name the reason
//! and the byte offset:
//!
//! ```
//! use canonurl::{Base, Canonicalizer, Profile, Reason};
//!
//! let base = Base::parse(b"https://example.com/shop/item?id=1").unwrap();
//! let mut c = Canonicalizer::new(Profile::Rfc3986).with_base(base);
//! let mut out = Vec::new();
//! c.canonicalize_into(b"../cart?add=%7e1", &mut out).unwrap();
//! assert_eq!(out, b"https://example.com/cart?add=~1");
//!
//! let mut logs = Canonicalizer::new(Profile::Rfc3986);
//! out.clear();
//! logs.canonicalize_target(b"/a/./b/../c?x=%7E", &mut out).unwrap();
//! assert_eq!(out, b"/a/c?x=~");
//!
//! let err = logs.canonicalize_into(b"http://exa<mple.com/", &mut out).unwrap_err();
//! assert_eq!(err.reason, Reason::ForbiddenDomainCodePoint(b'<'));
//! assert_eq!(err.offset, 10);
//! assert_eq!(err.to_string(), "forbidden domain code point '<' at byte 10");
//! ```
//!
//! The dedup profiles in action, and the same rules switched by a rules file
//! (the TOML of `canonurl --rules FILE`, built by [`canon::rules::file::build`]
//! on top of a profile's rules, with `--rule`-style edits last):
//!
//! ```
//! use std::sync::Arc;
//! use canonurl::canon::rules::{file, Edit};
//! use canonurl::{Canonicalizer, Profile};
//!
//! let url = b"https://WWW.Example.com/shop/index.html?utm_source=x&b=2&a=1#top";
//! let mut out = Vec::new();
//! Canonicalizer::new(Profile::Safe).canonicalize_into(url, &mut out).unwrap();
//! assert_eq!(out, b"https://www.example.com/shop/index.html?b=2&a=1");
//! out.clear();
//! Canonicalizer::new(Profile::Aggressive).canonicalize_into(url, &mut out).unwrap();
//! assert_eq!(out, b"https://example.com/shop/?a=1&b=2");
//!
//! // A rules file: keep `www.` everywhere, and on one host also drop `ref`.
//! let rules_file = r#"
//! rules = ["-www"]
//! [[host]]
//! match = ["www.example.com"]
//! extra-tracking-params = ["ref"]
//! "#;
//! let edits = Edit::parse_list("trailing-slash=keep").unwrap();
//! let rules = file::build(Profile::Aggressive.rule_mask(), Some(rules_file), &edits).unwrap();
//! let mut c = Canonicalizer::new(Profile::Aggressive).with_rules(Arc::new(rules));
//! out.clear();
//! c.canonicalize_into(b"https://www.example.com/a/?ref=tw&q=1", &mut out).unwrap();
//! assert_eq!(out, b"https://www.example.com/a/?q=1");
//! ```
//!
//! ## Dedup keys, fingerprints and SURT
//!
//! `canonurl --dedup-key` writes, beside each URL in the chosen profile, its
//! key in a dedup profile (by default `aggressive`): two canonicalizers, one
//! per profile, over the same input. A fingerprint is XXH64 with seed 42 over
//! the canonical bytes, as a signed 64-bit number ([`canon::key`]): the
//! value Spark SQL's `xxhash64(url)` gives, so keys computed here and in Spark
//! join. [`canon::surt::surt`] writes a canonical URL in SURT form, the
//! Wayback Machine's CDX key, with the host's labels reversed, and
//! [`canon::surt::ssurt`] in SSURT form, which keeps scheme, port and
//! userinfo:
//!
//! ```
//! use canonurl::canon::surt::{surt, SurtForm};
//! use canonurl::{canon, Canonicalizer, Profile};
//!
//! let input = b"http://www.Example.com/a/?utm_medium=mail&id=7";
//! let (mut url, mut key) = (Vec::new(), Vec::new());
//! Canonicalizer::new(Profile::Rfc3986).canonicalize_into(input, &mut url).unwrap();
//! let dedup = Canonicalizer::new(Profile::Aggressive).canonicalize_into(input, &mut key).unwrap();
//! assert_eq!(url, b"http://www.example.com/a/?utm_medium=mail&id=7");
//! assert_eq!(key, b"http://example.com/a/?id=7");
//! // Equal keys, equal fingerprints: a join key for Spark.
//! assert_eq!(canon::key(&key), canon::key(b"http://example.com/a/?id=7"));
//! assert_ne!(canon::key(&key), canon::key(&url));
//! // The fingerprint is XXH64 with seed 42 (`canon::KEY_SEED`), as a signed number.
//! assert_eq!(canon::KEY_SEED, 42);
//! assert_eq!(canon::key(&key), xxhash_rust::xxh64::xxh64(&key, 42) as i64);
//!
//! let mut cdx = Vec::new();
//! surt(&key, &dedup.parts, SurtForm::Cdx, &mut cdx);
//! assert_eq!(cdx, b"com,example)/a/?id=7");
//! cdx.clear();
//! surt(&key, &dedup.parts, SurtForm::Classic, &mut cdx);
//! assert_eq!(cdx, b"http://(com,example,)/a/?id=7");
//! let mut s = Vec::new();
//! canonurl::canon::surt::ssurt(&key, &dedup.parts, &mut s);
//! assert_eq!(s, b"com,example,//http:/a/?id=7");
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
//! ## Logs
//!
//! What the command does is public too, one module per stage of the data's
//! path: [`input`] (where lines come from, compressions;
//! [`input::follow`] reads a growing, rotated file as `tail -F`), [`log`]
//! (the [`RecordReader`] reads a line of any format into the parts of its
//! request, the logger's escaping undone; [`log::request_url`] turns them
//! into the URL to canonicalize; [`log::detect`] tells the format), and
//! [`pipeline`] ([`pipeline::run`]: inputs opened and decompressed, cut into
//! pieces of whole lines, read by workers on threads, written back in input
//! order or counted in a table that spills sorted runs to disk, with
//! statistics). How it does it (the chunker, the workers, the extractor of
//! each format) is crate-internal. A record by hand:
//!
//! ```
//! use canonurl::log::{request_url, Extracted, Field, Line, LogFormat, RequestUrl};
//! use canonurl::{Canonicalizer, Profile, RecordReader};
//!
//! let line = br#"shop.example:443 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a/../b?%7e HTTP/1.1" 200 1 "-" "ua""#;
//! let mut reader = RecordReader::new(LogFormat::Vhost, None);
//! let mut record = Extracted::default();
//! assert_eq!(reader.read(line, Field::Request, &mut record), Line::Record);
//! let mut url = Vec::new();
//! assert_eq!(request_url(&record, line, None, &mut url), RequestUrl::Built { prefix: 20 });
//! assert_eq!(url, b"https://shop.example/a/../b?%7e");
//! let mut out = Vec::new();
//! Canonicalizer::new(Profile::Rfc3986).canonicalize_into(&url, &mut out).unwrap();
//! assert_eq!(out, b"https://shop.example/b?~");
//! ```
//!
//! [`mine`] is `canonurl summarize` and `canonurl mine`: mergeable per-URL
//! summaries of logs ([`mine::summarize`], [`mine::merge`]), and the dedup
//! rules learned from them ([`mine::mine_logs`], [`mine::mine_summaries`]),
//! written as a rules file that [`canon::rules::file::build`] reads.
//!
//! [`pipeline::run`] is the whole run, what the `canonurl` binary calls:
//!
//! ```
//! use canonurl::input::Source;
//! use canonurl::pipeline::{run, Options, Sinks};
//!
//! let dir = std::env::temp_dir().join("canonurl-doc-example");
//! std::fs::create_dir_all(&dir).unwrap();
//! let log = dir.join("access.log");
//! std::fs::write(&log, concat!(
//!     "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a/./b?%7e HTTP/1.1\" 200 1 \"-\" \"ua\"\n",
//!     "1.2.3.4 - - [10/Oct/2000:13:55:37 -0700] \"OPTIONS * HTTP/1.1\" 200 1 \"-\" \"ua\"\n",
//! )).unwrap();
//! let (mut out, mut diag) = (Vec::new(), Vec::new());
//! let summary = run(
//!     &[Source::Path(log)],
//!     &Options::default(),
//!     Sinks { out: &mut out, rejects: None, diag: &mut diag, progress: None },
//! ).unwrap();
//! assert_eq!(out, b"/a/b?~\n");
//! assert_eq!((summary.stats.lines, summary.stats.emitted, summary.stats.skipped_total()), (2, 1, 1));
//! ```
//!
//! ## Canonicalizer pipeline
//!
//! ```text
//! bytes --> url::fast     already-canonical http(s)/file? one scan per component, one copy
//!       --> url::parser   otherwise the WHATWG state machine, writing the href directly
//!       --> url::host     domain / IPv4 / IPv6 / opaque host; IDNA slow path (idna crate)
//!       --> canon::rfc3986  escape normalization, RFC 3986 grammar (rfc3986 profile only)
//!       --> caller's Vec<u8> or bumpalo arena, with Parts offsets
//! ```
//!
//! Scanning is done by the crate's byte-set search (`url::simd`) over byte
//! sets declared once: thirty-two bytes a step with AVX2 or sixteen with
//! SSSE3 when the CPU has them (detected at run time), sixteen with SSE2 on
//! any other `x86_64`, a 256-entry table elsewhere.
//!
//! ## Why
//!
//! Access logs hold billions of URLs and most of them are already canonical.
//! canonurl recognizes those in one pass and copies them whole, and it only
//! starts rewriting at the first byte that needs it; it never allocates per
//! URL, never replaces bytes it cannot decode, and explains every rejection.
#![deny(unsafe_code)]
// Below `pipeline`, some crate-internal helpers serve only the layers that
// are left out (a time parser of the log layer, say, and its re-export); the
// full build still reports both.
#![cfg_attr(not(feature = "pipeline"), allow(dead_code, unused_imports))]
#![warn(missing_docs)]

// The layers follow the data, each behind the Cargo feature that brings its
// crates (Cargo.toml's [features]): `canon` and `url` always, `log` with
// `logs`, `input` with `io`, the rest with `pipeline`.
mod ascii;
pub mod canon;
#[cfg(feature = "io")]
pub mod input;
#[cfg(feature = "logs")]
pub mod log;
#[cfg(feature = "pipeline")]
pub mod mine;
#[cfg(feature = "pipeline")]
mod output;
#[cfg(feature = "pipeline")]
pub mod pipeline;
mod reject;
pub(crate) mod url;

pub use canon::{Base, Canonical, Canonicalizer, Profile, DEFAULT_MAX_INPUT_LEN};
#[cfg(feature = "logs")]
pub use log::RecordReader;
pub use reject::{Reason, Reject};
pub use url::parts::{Parts, ABSENT};

/// The pieces of the pipeline that fuzz targets, benches and tests drive
/// directly. Not part of the API: it changes without notice.
#[doc(hidden)]
#[cfg(feature = "pipeline")]
pub mod internals {
    pub use crate::input::stream::{open as open_input, Input};
    pub use crate::log::json::JsonExtractor;
    pub use crate::log::w3c::W3cExtractor;
    pub use crate::pipeline::job::FileCtx;
    pub use crate::pipeline::worker::{PieceOut, Worker};
    pub use crate::url::host::percent_decode_into;
}

/// The command's values are spelled as the library names them in statistics
/// and reports.
#[cfg(all(test, feature = "cli"))]
mod cli_names {
    use crate::log::json::JsonPreset;
    use crate::log::LogFormat;
    use crate::Profile;
    use clap::ValueEnum;

    fn name<E: ValueEnum>(e: &E) -> String {
        e.to_possible_value().unwrap().get_name().to_owned()
    }

    #[test]
    fn value_names_are_the_library_names() {
        assert_eq!(Profile::value_variants(), Profile::ALL);
        for p in Profile::ALL {
            assert_eq!(name(&p), p.name());
        }
        assert_eq!(LogFormat::value_variants(), LogFormat::ALL);
        for f in LogFormat::ALL {
            assert_eq!(name(&f), f.name());
        }
        assert_eq!(JsonPreset::value_variants(), JsonPreset::ALL);
        for j in JsonPreset::ALL {
            assert_eq!(name(&j), j.name());
        }
    }
}
