//! Counting every line: emitted, skipped with a reason, or rejected with a reason.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::canon::rules::{Rule, RuleMask};
use crate::log::{LineError, LogFormat, Skip};
use crate::Reason;

pub use super::distinct::SpillStats;

/// Why a line was rejected: the log line itself, or the URL in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The line is not a record of its format.
    Line(LineError),
    /// The URL in it was rejected by the canonicalizer.
    Url(Reason),
    /// The input ended (read error, truncated compressed stream) inside this line.
    TruncatedInput,
}

impl Why {
    /// Stable machine-friendly name, as used in statistics and TSV/JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Why::Line(e) => e.name(),
            Why::Url(r) => r.name(),
            Why::TruncatedInput => "truncated-input",
        }
    }
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Line(e) => f.write_str(e.message()),
            Why::Url(r) => write!(f, "{r}"),
            Why::TruncatedInput => f.write_str("input ended inside this line"),
        }
    }
}

/// Totals over lines. `lines == emitted + skipped + rejected`, always.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Input lines read (a last line without a line end counts).
    pub lines: u64,
    /// Lines that gave at least one URL.
    pub emitted: u64,
    /// URLs written (more than `emitted` with `--field both`).
    pub urls: u64,
    /// Lines skipped, by reason (indexed like [`Skip::ALL`]).
    pub skipped: [u64; Skip::ALL.len()],
    /// Lines rejected, by reason name.
    pub rejected: BTreeMap<&'static str, u64>,
    /// Decompressed input bytes.
    pub bytes: u64,
    /// URLs that some dedup rule changed.
    pub rules_urls: u64,
    /// Per rule (indexed like [`Rule::ALL`]): URLs it changed.
    pub rules_changed: [u64; Rule::ALL.len()],
    /// Per rule, with `--unique`/`--count` and statistics: distinct URLs
    /// (before the rules) that it merged into a URL seen before.
    pub rules_merged: Option<[u64; Rule::ALL.len()]>,
    /// With `rules_merged`: distinct URLs before the rules (compare with the
    /// summary's `distinct`, after them).
    pub distinct_before_rules: Option<u64>,
    /// With `--surt`: URLs without a host (origin-form targets with no host
    /// in the record and no `--base`), written as path and query only.
    pub surt_without_host: u64,
}

impl Stats {
    /// Counts a skipped line.
    pub(crate) fn skip(&mut self, why: Skip) {
        self.lines += 1;
        self.skipped[Skip::ALL.iter().position(|s| *s == why).unwrap_or(0)] += 1;
    }

    /// Counts a rejected line.
    pub(crate) fn reject(&mut self, why: Why) {
        self.lines += 1;
        *self.rejected.entry(why.name()).or_insert(0) += 1;
    }

    /// Counts an emitted line that gave `urls` URLs.
    pub(crate) fn emit(&mut self, urls: u64) {
        self.lines += 1;
        self.emitted += 1;
        self.urls += urls;
    }

    /// Counts `lines` emitted lines that gave one URL each.
    pub fn emit_each(&mut self, lines: u64) {
        self.lines += lines;
        self.emitted += lines;
        self.urls += lines;
    }

    /// Counts a URL that the rules in `fired` changed.
    #[inline]
    pub(crate) fn rule_fired(&mut self, fired: RuleMask) {
        self.rules_urls += 1;
        for at in fired.indices() {
            if let Some(n) = self.rules_changed.get_mut(at) {
                *n += 1;
            }
        }
    }

    /// Total of skipped lines.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.iter().sum()
    }

    /// Total of rejected lines.
    pub fn rejected_total(&self) -> u64 {
        self.rejected.values().sum()
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &Stats) {
        self.lines += other.lines;
        self.emitted += other.emitted;
        self.urls += other.urls;
        for (a, b) in self.skipped.iter_mut().zip(other.skipped) {
            *a += b;
        }
        for (k, v) in &other.rejected {
            *self.rejected.entry(k).or_insert(0) += v;
        }
        self.bytes += other.bytes;
        self.rules_urls += other.rules_urls;
        for (a, b) in self.rules_changed.iter_mut().zip(other.rules_changed) {
            *a += b;
        }
        self.surt_without_host += other.surt_without_host;
    }
}

/// What happened to one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileReport {
    /// Name as in diagnostics.
    pub name: String,
    /// The format used (given or detected); `None` when the file could not be read or detected.
    pub format: Option<LogFormat>,
    /// True when the format was detected rather than given.
    pub detected: bool,
    /// The JSON preset used, for `json`.
    pub json_preset: Option<&'static str>,
    /// `none`, `gzip`, `zstd`, `xz` or `bzip2`.
    pub compression: &'static str,
    /// The fatal error that ended this input early, if any.
    pub error: Option<String>,
    /// Counts for this input alone.
    pub stats: Stats,
}

/// An input that was not read, and why: a file found in a directory
/// argument that is hidden (its name starts with `.`), binary (a NUL byte
/// in its first decompressed bytes), of no log format that could be
/// detected, or a symbolic link to a directory, which is not followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedInput {
    /// Its path, as in diagnostics.
    pub name: String,
    /// `hidden`, `binary`, `unknown-format`, `symlinked-directory`,
    /// `broken-symlink` or `not-a-file` (a socket, a FIFO, a device).
    pub reason: &'static str,
}

/// The result of a run.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Totals over all inputs.
    pub stats: Stats,
    /// One report per input, in order.
    pub files: Vec<FileReport>,
    /// The inputs not read ([`SkippedInput`]).
    pub inputs_skipped: Vec<SkippedInput>,
    /// Distinct URLs (`--unique`, `--count`).
    pub distinct: Option<u64>,
    /// Wall time in seconds.
    pub seconds: f64,
    /// The dedup rules on for some host, when any: the statistics list each.
    pub rules: Option<RuleMask>,
    /// `--unique`/`--count`: the distinct table's memory and spills.
    pub spill: Option<SpillStats>,
    /// The output was closed early (its reader went away, as `| head`
    /// does): the run stopped reading there, and the counts are of what
    /// was read until then.
    pub output_closed: bool,
}

impl Summary {
    /// True when some input ended with a fatal error.
    pub fn had_errors(&self) -> bool {
        self.files.iter().any(|f| f.error.is_some())
    }

    /// The human-readable table `--stats` prints.
    pub fn to_text(&self) -> String {
        let s = &self.stats;
        let mut t = String::new();
        let rate = if self.seconds > 0.0 {
            s.bytes as f64 / self.seconds
        } else {
            0.0
        };
        let _ = writeln!(t, "canonurl statistics");
        for f in &self.files {
            let fmt = f.format.map_or("-", |f| f.name());
            let how = if f.detected { "detected" } else { "given" };
            let _ = write!(t, "  input {}: format {} ({})", f.name, fmt, how);
            if let Some(p) = f.json_preset {
                let _ = write!(t, ", json fields {p}");
            }
            if f.compression != "none" {
                let _ = write!(t, ", {}", f.compression);
            }
            let _ = writeln!(t, ", {} lines", f.stats.lines);
            // Its own line: a long reason (a path, an OS error) stays whole
            // and the input's line does not hide it.
            if let Some(e) = &f.error {
                let _ = writeln!(t, "    failed: {e}");
            }
        }
        for f in &self.inputs_skipped {
            let _ = writeln!(t, "  input {}: skipped ({})", f.name, f.reason);
        }
        if self.output_closed {
            let _ = writeln!(
                t,
                "  output closed early (its reader went away): counts of the lines read until then"
            );
        }
        let _ = writeln!(t, "  lines     {:>12}", s.lines);
        let _ = writeln!(t, "  emitted   {:>12}   ({} URLs)", s.emitted, s.urls);
        let _ = writeln!(t, "  skipped   {:>12}", s.skipped_total());
        for (why, n) in Skip::ALL.iter().zip(s.skipped) {
            if n > 0 {
                let _ = writeln!(t, "    {:<28}{:>10}", why.name(), n);
            }
        }
        let _ = writeln!(t, "  rejected  {:>12}", s.rejected_total());
        for (why, n) in &s.rejected {
            let _ = writeln!(t, "    {:<28}{:>10}", why, n);
        }
        if let Some(d) = self.distinct {
            let _ = writeln!(t, "  distinct  {:>12}", d);
        }
        // Nothing spilled (the usual run): no line; `--stats-json` still
        // has the table's peak.
        if let Some(p) = self.spill.filter(|p| p.runs > 0 || p.bytes > 0) {
            let _ = writeln!(
                t,
                "  spilled   {:>12}   in {} runs (table peak {} of {}, {} spills)",
                human_bytes(p.bytes),
                p.runs,
                human_bytes(p.table_peak),
                human_bytes(p.memory_limit),
                p.table_spills
            );
        }
        if let Some(on) = self.rules {
            let _ = writeln!(t, "  rules     {:>12}   URLs changed", s.rules_urls);
            if let Some(b) = s.distinct_before_rules {
                let _ = writeln!(t, "    distinct before rules   {:>10}", b);
            }
            let merged = s.rules_merged.is_some();
            let _ = writeln!(
                t,
                "    {:<28}{:>10}{}",
                "rule",
                "changed",
                if merged { "    merged" } else { "" }
            );
            for r in on.iter() {
                let _ = write!(t, "    {:<28}{:>10}", r.name(), s.rules_changed[r as usize]);
                if let Some(m) = s.rules_merged {
                    let _ = write!(t, "{:>10}", m[r as usize]);
                }
                t.push('\n');
            }
        }
        let _ = writeln!(
            t,
            "  bytes     {:>12}   ({} bytes in {:.3} s, {}/s)",
            human_bytes(s.bytes),
            s.bytes,
            self.seconds,
            human_bytes(rate as u64)
        );
        t
    }

    /// The JSON object `--stats-json` writes.
    ///
    /// ```
    /// use canonurl::pipeline::stats::{Summary, Why};
    /// use canonurl::log::Skip;
    /// use canonurl::Reason;
    ///
    /// let mut summary = Summary::default();
    /// summary.stats.lines = 3;
    /// summary.stats.emitted = 1;
    /// summary.stats.skipped[Skip::ALL.iter().position(|&s| s == Skip::EmptyLine).unwrap()] = 1;
    /// summary.stats.rejected.insert(Why::Url(Reason::HostMissing).name(), 1);
    /// let json: serde_json::Value = serde_json::from_str(&summary.to_json()).unwrap();
    /// assert_eq!(json["lines"], 3);
    /// assert_eq!(json["skipped"], 1);
    /// assert_eq!(json["rejected_by_reason"]["host-missing"], 1);
    /// assert!(summary.to_text().contains("lines"));
    /// ```
    pub fn to_json(&self) -> String {
        let s = &self.stats;
        let mut j = String::from("{");
        let _ = write!(
            j,
            "\"lines\":{},\"emitted\":{},\"urls\":{},\"skipped\":{},\"rejected\":{},",
            s.lines,
            s.emitted,
            s.urls,
            s.skipped_total(),
            s.rejected_total()
        );
        j.push_str("\"skipped_by_reason\":{");
        let mut first = true;
        for (why, n) in Skip::ALL.iter().zip(s.skipped) {
            if n > 0 {
                if !first {
                    j.push(',');
                }
                first = false;
                let _ = write!(j, "\"{}\":{}", why.name(), n);
            }
        }
        j.push_str("},\"rejected_by_reason\":{");
        let mut first = true;
        for (why, n) in &s.rejected {
            if !first {
                j.push(',');
            }
            first = false;
            let _ = write!(j, "\"{why}\":{n}");
        }
        let _ = write!(
            j,
            "}},\"bytes\":{},\"seconds\":{:.6},\"mb_per_s\":{:.3},",
            s.bytes,
            self.seconds,
            if self.seconds > 0.0 {
                s.bytes as f64 / 1e6 / self.seconds
            } else {
                0.0
            }
        );
        match self.distinct {
            Some(d) => {
                let _ = write!(j, "\"distinct\":{d},");
            }
            None => j.push_str("\"distinct\":null,"),
        }
        match self.spill {
            Some(p) => {
                let _ = write!(
                    j,
                    "\"spill\":{{\"memory_limit\":{},\"table_peak\":{},\"table_spills\":{},\"runs\":{},\"bytes\":{}}},",
                    p.memory_limit, p.table_peak, p.table_spills, p.runs, p.bytes
                );
            }
            None => j.push_str("\"spill\":null,"),
        }
        match self.rules {
            Some(on) => {
                let _ = write!(j, "\"rules\":{{\"urls_changed\":{},", s.rules_urls);
                if let Some(b) = s.distinct_before_rules {
                    let _ = write!(j, "\"distinct_before_rules\":{b},");
                }
                j.push_str("\"by_rule\":{");
                for (i, r) in on.iter().enumerate() {
                    if i > 0 {
                        j.push(',');
                    }
                    let _ = write!(
                        j,
                        "\"{}\":{{\"changed\":{}",
                        r.name(),
                        s.rules_changed[r as usize]
                    );
                    if let Some(m) = s.rules_merged {
                        let _ = write!(j, ",\"merged\":{}", m[r as usize]);
                    }
                    j.push('}');
                }
                j.push_str("}},");
            }
            None => j.push_str("\"rules\":null,"),
        }
        j.push_str("\"inputs\":[");
        for (i, f) in self.files.iter().enumerate() {
            if i > 0 {
                j.push(',');
            }
            j.push_str("{\"name\":");
            json_string(&mut j, f.name.as_bytes());
            let _ = write!(
                j,
                ",\"format\":{},\"detected\":{},\"json_preset\":{},\"compression\":\"{}\",\"lines\":{},\"emitted\":{},\"skipped\":{},\"rejected\":{},\"error\":",
                f.format.map_or("null".to_string(), |f| format!("\"{}\"", f.name())),
                f.detected,
                f.json_preset.map_or("null".to_string(), |p| format!("\"{p}\"")),
                f.compression,
                f.stats.lines,
                f.stats.emitted,
                f.stats.skipped_total(),
                f.stats.rejected_total()
            );
            match &f.error {
                Some(e) => json_string(&mut j, e.as_bytes()),
                None => j.push_str("null"),
            }
            j.push('}');
        }
        j.push_str("],\"inputs_skipped\":[");
        for (i, f) in self.inputs_skipped.iter().enumerate() {
            if i > 0 {
                j.push(',');
            }
            j.push_str("{\"name\":");
            json_string(&mut j, f.name.as_bytes());
            let _ = write!(j, ",\"reason\":\"{}\"}}", f.reason);
        }
        let _ = write!(j, "],\"output_closed\":{}}}", self.output_closed);
        j
    }
}

/// Appends `bytes` as a JSON string. Valid UTF-8 is kept; each byte of an
/// invalid sequence becomes U+FFFD, since JSON cannot carry raw bytes.
fn json_string(out: &mut String, bytes: &[u8]) {
    let mut v = Vec::new();
    crate::output::jsonl::string(bytes, &mut v);
    out.push_str(&String::from_utf8_lossy(&v));
}
/// A size in binary units, as the progress bar writes them: `512 B`,
/// `3.2 KiB`, `12.0 MiB`, `1.5 GiB`.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rule_fired` counts each rule of the mask at the index that
    /// `RuleMask::iter` gives it, and nothing else.
    #[test]
    fn rule_fired_counts_the_rules_of_the_mask() {
        let mut stats = Stats::default();
        let mut expected = [0u64; Rule::ALL.len()];
        for (i, &r) in Rule::ALL.iter().enumerate() {
            let other = Rule::ALL[(i * 7 + 3) % Rule::ALL.len()];
            let mask = RuleMask::of(&[r, other]);
            stats.rule_fired(mask);
            for m in mask.iter() {
                expected[m as usize] += 1;
            }
        }
        assert_eq!(stats.rules_changed, expected);
        assert_eq!(stats.rules_urls, Rule::ALL.len() as u64);
    }
}
