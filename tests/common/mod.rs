//! Helpers shared by the integration tests: where the shared test data lives,
//! reading JSON and line files from it, and the known-failures ratchet.
//!
//! The data is never copied into this repository. It is read from
//! `$CARGO_MANIFEST_DIR/../shared/data`, or from `$CANONURL_SHARED_DATA` when
//! that is set. When neither exists, data-driven tests print a notice and
//! return early instead of failing.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod dust;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use canonurl::canon::rules::{file, Edit};
use canonurl::{Canonical, Canonicalizer, Profile, Reject};

/// Environment variable that overrides the location of the shared data.
pub const DATA_ENV: &str = "CANONURL_SHARED_DATA";

/// Replaces a lone UTF-16 surrogate escape in JSON text (which `serde_json`
/// cannot represent in a `String`); cases containing it are skipped.
pub const LONE_SURROGATE: &str = "\u{FFFF}LONE-SURROGATE\u{FFFF}";

/// Where the shared data directory should be.
pub fn shared_data_path() -> PathBuf {
    match std::env::var_os(DATA_ENV) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
    }
}

/// The shared data directory, or `None` when it does not exist (also when
/// `CANONURL_SHARED_DATA` points nowhere: the skip notice names the path).
pub fn shared_data() -> Option<PathBuf> {
    let path = shared_data_path();
    path.is_dir().then_some(path)
}

/// `shared_data()`, printing the skip notice for `test` when it is absent.
pub fn shared_data_or_skip(test: &str) -> Option<PathBuf> {
    let data = shared_data();
    if data.is_none() {
        eprintln!(
            "skipping {test}: shared data not found at {}; set {DATA_ENV}",
            shared_data_path().display()
        );
    }
    data
}

/// Reads a whole file of the shared data (which must exist once the
/// directory does).
pub fn read_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Splits bytes into lines the way the CLI reads them: each line ends at
/// `\n`, and only that `\n` and one `\r` directly before it are removed.
/// Everything else is kept (a UTF-8 BOM, spaces, tabs, a lone `\r`).
/// A final line without `\n` counts; nothing follows a final `\n`.
pub fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (line, next) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => {
                let line = &rest[..i];
                (line.strip_suffix(b"\r").unwrap_or(line), &rest[i + 1..])
            }
            None => (rest, &rest[rest.len()..]),
        };
        lines.push(line);
        rest = next;
    }
    lines
}

/// Reads a file and splits it with [`split_lines`], owning the lines.
pub fn read_lines(path: &Path) -> Vec<Vec<u8>> {
    split_lines(&read_bytes(path))
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect()
}

/// Reads a JSON file. Returns the value and how many lone surrogate escapes
/// had to be replaced with [`LONE_SURROGATE`] first (0 for most files).
pub fn read_json(path: &Path) -> (serde_json::Value, usize) {
    let text = read_bytes(path);
    match serde_json::from_slice(&text) {
        Ok(v) => (v, 0),
        Err(first) => {
            let text = String::from_utf8(text)
                .unwrap_or_else(|e| panic!("{} is not UTF-8: {e}", path.display()));
            let (fixed, replaced) = replace_lone_surrogates(&text);
            if replaced == 0 {
                panic!("cannot parse {}: {first}", path.display());
            }
            let v = serde_json::from_str(&fixed).unwrap_or_else(|e| {
                panic!(
                    "cannot parse {} even without lone surrogates: {e}",
                    path.display()
                )
            });
            (v, replaced)
        }
    }
}

/// Replaces every `\uXXXX` escape of a lone surrogate (a high one not
/// followed by a low one, or a low one on its own) with the escaped form of
/// [`LONE_SURROGATE`]. Other escapes, including `\\`, are skipped whole.
pub fn replace_lone_surrogates(json: &str) -> (String, usize) {
    fn hex4(b: &[u8]) -> Option<u16> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(s, 16).ok()
    }
    fn unit_at(b: &[u8], i: usize) -> Option<u16> {
        if b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u') {
            hex4(&b[i + 2..])
        } else {
            None
        }
    }
    let marker: String = LONE_SURROGATE
        .chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                format!("\\u{:04x}", c as u32)
            }
        })
        .collect();
    let b = json.as_bytes();
    let mut out = String::with_capacity(json.len());
    let mut replaced = 0;
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        match unit_at(b, i) {
            Some(0xD800..=0xDBFF) => {
                if matches!(unit_at(b, i + 6), Some(0xDC00..=0xDFFF)) {
                    i += 12;
                } else {
                    out.push_str(&json[copied..i]);
                    out.push_str(&marker);
                    replaced += 1;
                    i += 6;
                    copied = i;
                }
            }
            Some(0xDC00..=0xDFFF) => {
                out.push_str(&json[copied..i]);
                out.push_str(&marker);
                replaced += 1;
                i += 6;
                copied = i;
            }
            Some(_) => i += 6,
            None => i += 2,
        }
    }
    out.push_str(&json[copied..]);
    (out, replaced)
}

/// The top-level array of a WPT-style JSON file, without the comment strings.
pub fn json_objects(v: &serde_json::Value) -> Vec<&serde_json::Map<String, serde_json::Value>> {
    v.as_array()
        .expect("top-level JSON array")
        .iter()
        .filter_map(serde_json::Value::as_object)
        .collect()
}

/// A string field, `None` when JSON `null` or missing.
pub fn str_field<'a>(
    obj: &'a serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<&'a str> {
    obj.get(key).and_then(serde_json::Value::as_str)
}

/// Bytes as a readable string for messages (`\xNN` for invalid UTF-8).
pub fn show(bytes: &[u8]) -> String {
    format!("\"{}\"", bytes.escape_ascii())
}

/// An expected-failures list that may only shrink.
///
/// The file has one line per known failing case: the case's key (a fixed
/// number of tab-separated fields, each a Rust `{:?}` string or `null`), then
/// a tab and a free-form reason. Blank lines and lines starting with `#` are
/// comments. [`Ratchet::finish`] fails when a case that is not listed fails,
/// when a listed case passes, and when a listed case no longer exists.
pub struct Ratchet {
    file: PathBuf,
    key_fields: usize,
    known: BTreeMap<String, String>,
    /// Key -> first failure detail, for keys with at least one failing case.
    failed: BTreeMap<String, String>,
    seen: BTreeSet<String>,
    total: usize,
    passed: usize,
}

impl Ratchet {
    /// Loads `tests/<name>` from this crate.
    pub fn load(name: &str, key_fields: usize) -> Ratchet {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(name);
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let mut known = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.splitn(key_fields + 1, '\t').collect();
            if fields.len() < key_fields {
                panic!(
                    "{}:{}: expected {key_fields} tab-separated key field(s): {line:?}",
                    file.display(),
                    n + 1
                );
            }
            let key = fields[..key_fields].join("\t");
            let reason = fields.get(key_fields).copied().unwrap_or("").to_string();
            if known.insert(key, reason).is_some() {
                panic!("{}:{}: duplicate entry {line:?}", file.display(), n + 1);
            }
        }
        Ratchet {
            file,
            key_fields,
            known,
            failed: BTreeMap::new(),
            seen: BTreeSet::new(),
            total: 0,
            passed: 0,
        }
    }

    /// Builds a key from its fields (each already formatted, no tabs).
    pub fn key(fields: &[&str]) -> String {
        debug_assert!(fields.iter().all(|f| !f.contains(['\t', '\n'])));
        fields.join("\t")
    }

    /// Records the outcome of one case.
    pub fn record(&mut self, key: String, outcome: Result<(), String>) {
        assert_eq!(key.split('\t').count(), self.key_fields, "bad key {key:?}");
        self.total += 1;
        match outcome {
            Ok(()) => self.passed += 1,
            Err(detail) => {
                self.failed.entry(key.clone()).or_insert(detail);
            }
        }
        self.seen.insert(key);
    }

    /// Number of cases recorded so far.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Prints `name: N passed / M total` and panics if the list is out of date.
    pub fn finish(self, name: &str) {
        println!(
            "{name}: {} passed / {} total ({} listed as known failures in {})",
            self.passed,
            self.total,
            self.known.len(),
            self.file.display()
        );
        let new: Vec<(&String, &String)> = self
            .failed
            .iter()
            .filter(|(k, _)| !self.known.contains_key(*k))
            .collect();
        let fixed: Vec<&String> = self
            .known
            .keys()
            .filter(|k| self.seen.contains(*k) && !self.failed.contains_key(*k))
            .collect();
        let stale: Vec<&String> = self
            .known
            .keys()
            .filter(|k| !self.seen.contains(*k))
            .collect();
        if new.is_empty() && fixed.is_empty() && stale.is_empty() {
            return;
        }
        let mut msg = String::new();
        if !new.is_empty() {
            let _ = writeln!(msg, "{name}: {} new failure(s):", new.len());
            for (key, detail) in new.iter().take(40) {
                let _ = writeln!(msg, "  {key}\n      {detail}");
            }
            if new.len() > 40 {
                let _ = writeln!(msg, "  ... and {} more", new.len() - 40);
            }
        }
        if !fixed.is_empty() {
            let _ = writeln!(
                msg,
                "{name}: {} listed case(s) now pass; remove them from {}:",
                fixed.len(),
                self.file.display()
            );
            for key in fixed.iter().take(40) {
                let _ = writeln!(msg, "  {key}");
            }
        }
        if !stale.is_empty() {
            let _ = writeln!(
                msg,
                "{name}: {} listed case(s) are not in the data any more:",
                stale.len()
            );
            for key in stale.iter().take(40) {
                let _ = writeln!(msg, "  {key}");
            }
        }
        // The list as it would be with the current results, for review.
        let proposal = self.write_proposal();
        let _ = writeln!(
            msg,
            "the list matching the current results is in {}",
            proposal.display()
        );
        panic!("{msg}");
    }

    /// Writes header + current failures to the target tmp dir (never the repo).
    fn write_proposal(&self) -> PathBuf {
        let original = std::fs::read_to_string(&self.file).unwrap_or_default();
        let mut text: String = original
            .lines()
            .take_while(|l| l.starts_with('#') || l.trim().is_empty())
            .map(|l| format!("{l}\n"))
            .collect();
        for (key, detail) in &self.failed {
            let reason = match self.known.get(key) {
                Some(r) if !r.is_empty() => r.clone(),
                _ => one_line(detail, 120),
            };
            let _ = writeln!(text, "{key}\t{reason}");
        }
        let name = self.file.file_name().unwrap().to_string_lossy();
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.proposed"));
        std::fs::write(&path, text)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        path
    }
}

/// `s` on one line (tabs and newlines escaped), cut to about `max` chars.
pub fn one_line(s: &str, max: usize) -> String {
    let mut out: String = s.escape_debug().collect();
    if out.len() > max {
        let mut cut = max;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

/// Runs the `canonurl` binary of this build with `args`, `stdin` fed from a
/// thread (so a large input cannot block against a full stdout pipe), and
/// returns its exit status, stdout and stderr.
pub fn run_canonurl(args: &[&str], stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(args)
        // A developer's own defaults must not change what the tests see.
        .env_remove("CANONURL_CONFIG_PATH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn canonurl");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_vec();
    // The command may exit without reading (usage errors): ignore write errors.
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for canonurl");
    feeder.join().expect("feeder thread");
    output
}

/// The WPT `urltestdata.json` inputs with their bases parsed: cases with a
/// lone surrogate, and cases whose base canonurl rejects, are left out.
pub fn wpt_inputs_with_bases(data: &Path) -> Vec<(String, Option<canonurl::Base>)> {
    let (json, _) = read_json(&data.join("wpt-url/urltestdata.json"));
    let mut cases = Vec::new();
    for case in json_objects(&json) {
        let Some(input) = str_field(case, "input") else {
            continue;
        };
        let base = str_field(case, "base");
        if input.contains(LONE_SURROGATE) || base.is_some_and(|b| b.contains(LONE_SURROGATE)) {
            continue;
        }
        let base = match base.map(|b| canonurl::Base::parse(b.as_bytes())) {
            None => None,
            Some(Ok(b)) => Some(b),
            Some(Err(_)) => continue,
        };
        cases.push((input.to_string(), base));
    }
    cases
}

/// A canonicalizer for `profile` with a rules file (`toml`, if any) and
/// `--rule`-style `edits` on top; panics with the error when they do not
/// build.
pub fn with_rules(profile: Profile, toml: Option<&str>, edits: &str) -> Canonicalizer {
    let edits = Edit::parse_list(edits).unwrap_or_else(|e| panic!("edits {edits:?}: {e}"));
    let set = file::build(profile.rule_mask(), toml, &edits)
        .unwrap_or_else(|e| panic!("rules file / edits {edits:?}: {e}\n{toml:?}"));
    Canonicalizer::new(profile).with_rules(Arc::new(set))
}

/// Canonicalizes an input that starts with `/` as a request target, anything
/// else as a URL, into `out` (cleared first).
pub fn canon(c: &mut Canonicalizer, input: &[u8], out: &mut Vec<u8>) -> Result<Canonical, Reject> {
    out.clear();
    if input.first() == Some(&b'/') {
        c.canonicalize_target(input, out)
    } else {
        c.canonicalize_into(input, out)
    }
}
